@testable import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// Each app's support contact (issue 39.5, App Review guideline 1.2): from the apps file, served
/// in `GET /settings` for the app to show, checked at start.
@Suite("Auth support contact")
struct AuthSupportContactTests {
    @Test("GET /settings names the app's support address and page; an app without them answers nulls")
    func served() async throws {
        try await withRunningAuth(configure: { settings in
            settings.apps[.unify]?.supportEmail = "hilfe@unify.example"
            settings.apps[.unify]?.supportUrl = "https://unify.example/hilfe"
        }) { auth in
            let unify = try await auth.request(.GET, "/settings", app: .unify)
            #expect(unify.status == 200)
            let support = try #require(unify.json["support"] as? [String: Any], "\(unify.json)")
            #expect(support["email"] as? String == "hilfe@unify.example" && support["url"] as? String == "https://unify.example/hilfe")
            let other = try #require(try await auth.request(.GET, "/settings", app: .mycirclee).json["support"] as? [String: Any])
            #expect(other["email"] is NSNull && other["url"] is NSNull, "\(other)")
        }
    }

    @Test("a support address or page that is not one is refused at start")
    func checked() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("apps") + ".json")
        defer { try? FileManager.default.removeItem(at: file) }
        for bad in [#"{"unify": {"support_email": "not an address"}}"#, #"{"unify": {"support_email": "Help <help@unify.example>"}}"#,
                    #"{"unify": {"support_url": "javascript:alert(1)"}}"#, #"{"unify": {"support_url": "https://"}}"#] {
            try Data(bad.utf8).write(to: file)
            #expect(throws: ConfigurationError.self, "\(bad)") { try AuthSettings.loadApps(AppsFile.parse(Data(contentsOf: file))) }
        }
        try Data(#"{"habithive": {"support_email": "help@habithive.example", "support_url": "https://habithive.example/help"}}"#.utf8).write(to: file)
        #expect(try AuthSettings.loadApps(AppsFile.parse(Data(contentsOf: file)))[.habithive]?.supportEmail == "help@habithive.example")
    }
}
