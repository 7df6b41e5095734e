import AsyncHTTPClient
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOHTTP1
import Testing
@testable import NotificationsService

@Suite("Notifications service: API")
struct NotificationsServiceTests {
    @Test("the OpenAPI document lists exactly the routes the service registered, and each answers")
    func openAPIMatchesRoutes() async throws {
        try await withRunningNotifications { running in
            let user = try await running.user(.mycirclee)
            #expect(try await running.service.openAPIProblems(NotificationsService.openAPIDocument, as: user) == [])
        }
    }

    @Test("device tokens: register, list, unregister; a token moves to the newest user; apps are separate; bad input 422 with nothing written")
    func deviceTokens() async throws {
        try await withRunningNotifications { n in
            let alice = try await n.user(.mycirclee), bob = try await n.user(.mycirclee), unify = try await n.user(.unify)
            #expect(try await n.service.request(.GET, "/devices", as: nil).status == 401)
            let token = RunningNotifications.randomToken()
            let registered = try await n.service.request(.POST, "/devices", as: alice, json: ["token": token.uppercased(), "environment": "sandbox", "app_version": "3.2", "locale": "de-DE"])
            #expect(registered.status == 200)
            #expect(registered.body["token"]?.stringValue == token && registered.body["environment"]?.stringValue == "sandbox" && registered.body["app"]?.stringValue == "mycirclee")
            // Registering again is idempotent.
            #expect(try await n.service.request(.POST, "/devices", as: alice, json: ["token": token]).status == 200)
            #expect(try await n.service.request(.GET, "/devices", as: alice).body["devices"]?.arrayValue?.count == 1)
            // The same device signs in as bob: the token is bob's now.
            #expect(try await n.service.request(.POST, "/devices", as: bob, json: ["token": token]).status == 200)
            #expect(try await n.service.request(.GET, "/devices", as: alice).body["devices"]?.arrayValue?.isEmpty == true)
            #expect(try await n.service.request(.GET, "/devices", as: bob).body["devices"]?.arrayValue?.count == 1)
            // Another app's user sees nothing of mycirclee's, and can register the same hex for their app.
            #expect(try await n.service.request(.GET, "/devices", as: unify).body["devices"]?.arrayValue?.isEmpty == true)
            #expect(try await n.service.request(.POST, "/devices", as: unify, json: ["token": token]).status == 200)
            #expect(try await n.service.request(.GET, "/devices", as: bob).body["devices"]?.arrayValue?.count == 1)
            // Unregister: only your own.
            #expect(try await n.service.request(.DELETE, "/devices/\(token)", as: alice).code == "device_not_found")
            #expect(try await n.service.request(.DELETE, "/devices/\(token)", as: bob).status == 204)
            #expect(try await n.service.request(.GET, "/devices", as: bob).body["devices"]?.arrayValue?.isEmpty == true)
            // Bad input.
            for body: [String: Any] in [["token": "not-hex"], ["token": token, "environment": "staging"], ["token": token, "platform": "android"], ["environment": "sandbox"], ["token": 42]] {
                let reply = try await n.service.request(.POST, "/devices", as: alice, json: body)
                #expect(reply.status == 422, "\(body) → \(reply.status) \(reply.body)")
            }
            #expect(try await n.service.request(.POST, "/devices", as: alice, raw: "{not json").status == 400)
            #expect(try await n.service.request(.GET, "/devices", as: alice).body["devices"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("device tokens in the seeds' words: apns_token, environment prod or development; token and apns_token must agree")
    func seedDeviceTokenNames() async throws {
        try await withRunningNotifications { n in
            let hiveUser = try await n.user(.habithive)
            let token = RunningNotifications.randomToken(), other = RunningNotifications.randomToken()
            let prod = try await n.service.request(.POST, "/devices", as: hiveUser, json: ["apns_token": token, "environment": "prod"])
            #expect(prod.status == 200 && prod.body["token"]?.stringValue == token && prod.body["environment"]?.stringValue == "production", "\(prod.body)")
            let development = try await n.service.request(.POST, "/devices", as: hiveUser, json: ["apns_token": other.uppercased(), "environment": "development"])
            #expect(development.status == 200 && development.body["environment"]?.stringValue == "sandbox")
            #expect(try await n.service.request(.POST, "/devices", as: hiveUser, json: ["token": token, "apns_token": token]).status == 200)
            let disagree = try await n.service.request(.POST, "/devices", as: hiveUser, json: ["token": token, "apns_token": other])
            #expect(disagree.status == 422 && disagree.code == "validation_failed")
            #expect(try await n.service.request(.GET, "/devices", as: hiveUser).body["devices"]?.arrayValue?.count == 2)
        }
    }

    @Test("preferences: every kind of the app, switched off and on; quiet hours set and removed; bad input 422 with nothing written")
    func preferences() async throws {
        try await withRunningNotifications { n in
            let user = try await n.user(.habithive)
            let initial = try await n.service.request(.GET, "/preferences", as: user)
            #expect(initial.body["kinds"]?.objectValue?.keys.sorted() == ["hive_advanced", "hive_at_risk", "hive_invitation", "hive_joined", "streak_milestone"])
            #expect(initial.body["quiet_hours"] == .null)
            let updated = try await n.service.request(.PATCH, "/preferences", as: user, json: [
                "kinds": ["hive_joined": false], "quiet_hours": ["start": "22:30", "end": "07:00", "timezone": "Europe/Berlin"],
            ])
            #expect(updated.status == 200)
            #expect(updated.body["kinds"]?["hive_joined"]?.boolValue == false && updated.body["kinds"]?["hive_advanced"]?.boolValue == true)
            #expect(updated.body["quiet_hours"]?["start"]?.stringValue == "22:30" && updated.body["quiet_hours"]?["timezone"]?.stringValue == "Europe/Berlin")
            for body: [String: Any] in [["kinds": ["circle_post": false]], ["quiet_hours": ["start": "22:00", "end": "07:00", "timezone": "Nowhere/Else"]],
                                        ["quiet_hours": ["start": "9:00", "end": "07:00", "timezone": "UTC"]], ["kinds": ["hive_joined": "no"]]] {
                let reply = try await n.service.request(.PATCH, "/preferences", as: user, json: body)
                #expect(reply.status == 422, "\(body) → \(reply.status)")
            }
            let unchanged = try await n.service.request(.GET, "/preferences", as: user)
            #expect(unchanged.body == updated.body)
            let cleared = try await n.service.request(.PATCH, "/preferences", as: user, json: ["quiet_hours": NSNull(), "kinds": ["hive_joined": true]])
            #expect(cleared.body["quiet_hours"] == .null && cleared.body["kinds"]?["hive_joined"]?.boolValue == true)
        }
    }
}
