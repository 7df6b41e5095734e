import AsyncHTTPClient
import ColonyClientTesting
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
            #expect(try await answer { try await n.api(nil).listDevices() }.status == 401)
            func register(_ user: RunningService.User, _ token: String) async throws -> Int {
                try await answer { try await n.api(user).registerDevice(body: .json(.init(token: token))) }.status
            }
            let token = RunningNotifications.randomToken()
            let registered = try await n.api(alice).registerDevice(body: .json(.init(token: token.uppercased(), environment: .sandbox, appVersion: "3.2", locale: "de-DE"))).ok.body.json
            #expect(registered.token == token && registered.environment == .sandbox && registered.app == "mycirclee")
            // Registering again is idempotent.
            #expect(try await register(alice, token) == 200)
            #expect(try await n.devices(of: alice).count == 1)
            // The same device signs in as bob: the token is bob's now.
            #expect(try await register(bob, token) == 200)
            #expect(try await n.devices(of: alice).isEmpty)
            #expect(try await n.devices(of: bob).count == 1)
            // Another app's user sees nothing of mycirclee's, and can register the same hex for their app.
            #expect(try await n.devices(of: unify).isEmpty)
            #expect(try await register(unify, token) == 200)
            #expect(try await n.devices(of: bob).count == 1)
            // Unregister: only your own.
            #expect(try await answer { try await n.api(alice).unregisterDevice(path: .init(token: token)) }.code == "device_not_found")
            #expect(try await answer { try await n.api(bob).unregisterDevice(path: .init(token: token)) }.status == 204)
            #expect(try await n.devices(of: bob).isEmpty)
            // Bad input.
            for registration: Schemas.DeviceRegistration in [.init(token: "not-hex"), .init(environment: .sandbox)] {
                let reply = try await answer { try await n.api(alice).registerDevice(body: .json(registration)) }
                #expect(reply.status == 422, "\(registration) → \(reply.status) \(reply.body)")
            }
            // Raw: values outside the document's types (an unknown environment or platform, a number), and a body that is not JSON.
            for body: [String: Any] in [["token": token, "environment": "staging"], ["token": token, "platform": "android"], ["token": 42]] {
                let reply = try await n.service.request(.POST, "/devices", as: alice, json: body)
                #expect(reply.status == 422, "\(body) → \(reply.status) \(reply.body)")
            }
            #expect(try await n.service.request(.POST, "/devices", as: alice, raw: "{not json").status == 400)
            #expect(try await n.devices(of: alice).isEmpty)
        }
    }

    @Test("device tokens in the seeds' words: apns_token, environment prod or development; token and apns_token must agree")
    func seedDeviceTokenNames() async throws {
        try await withRunningNotifications { n in
            let hiveUser = try await n.user(.habithive)
            let hive = n.api(hiveUser)
            let token = RunningNotifications.randomToken(), other = RunningNotifications.randomToken()
            let prod = try await hive.registerDevice(body: .json(.init(apnsToken: token, environment: .prod))).ok.body.json
            #expect(prod.token == token && prod.environment == .production, "\(prod)")
            let development = try await hive.registerDevice(body: .json(.init(apnsToken: other.uppercased(), environment: .development))).ok.body.json
            #expect(development.environment == .sandbox)
            #expect(try await answer { try await hive.registerDevice(body: .json(.init(token: token, apnsToken: token))) }.status == 200)
            let disagree = try await answer { try await hive.registerDevice(body: .json(.init(token: token, apnsToken: other))) }
            #expect(disagree.status == 422 && disagree.code == "validation_failed")
            #expect(try await n.devices(of: hiveUser).count == 2)
        }
    }

    @Test("preferences: every kind of the app, switched off and on; quiet hours set and removed; bad input 422 with nothing written")
    func preferences() async throws {
        try await withRunningNotifications { n in
            let user = try await n.user(.habithive)
            let api = n.api(user)
            let initial = try await api.getPreferences().ok.body.json
            #expect(initial.kinds.additionalProperties.keys.sorted() == ["hive_advanced", "hive_at_risk", "hive_invitation", "hive_joined", "report_outcome", "streak_milestone"])
            #expect(initial.quietHours == nil)
            let updated = try await api.updatePreferences(body: .json(.init(
                kinds: .init(additionalProperties: ["hive_joined": false]), quietHours: .init(start: "22:30", end: "07:00", timezone: "Europe/Berlin")
            ))).ok.body.json
            #expect(updated.kinds.additionalProperties["hive_joined"] == false && updated.kinds.additionalProperties["hive_advanced"] == true)
            #expect(updated.quietHours?.start == "22:30" && updated.quietHours?.timezone == "Europe/Berlin")
            let bad: [Schemas.PreferencesPatch] = [
                .init(kinds: .init(additionalProperties: ["circle_post": false])),
                .init(quietHours: .init(start: "22:00", end: "07:00", timezone: "Nowhere/Else")),
                .init(quietHours: .init(start: "9:00", end: "07:00", timezone: "UTC")),
            ]
            for patch in bad {
                let reply = try await answer { try await api.updatePreferences(body: .json(patch)) }
                #expect(reply.status == 422, "\(patch) → \(reply.status)")
            }
            // Raw: a kind switched by a string, which the typed client cannot send.
            #expect(try await n.service.request(.PATCH, "/preferences", as: user, json: ["kinds": ["hive_joined": "no"]]).status == 422)
            #expect(try await api.getPreferences().ok.body.json == updated)
            // Raw: null removes the quiet hours, which the typed client cannot send (it leaves nil out).
            let cleared = try await n.service.request(.PATCH, "/preferences", as: user, json: ["quiet_hours": NSNull(), "kinds": ["hive_joined": true]])
            #expect(cleared.body["quiet_hours"] == .null && cleared.body["kinds"]?["hive_joined"]?.boolValue == true)
        }
    }
}
