import ColonyPlatform
import HTTPTypes
import Hummingbird

/// GoTrue features Colony does not offer (SAML SSO, GoTrue as an OAuth 2.1 server, runtime custom
/// providers, SCIM, passkeys), answered as GoTrue answers them while switched off, its default: 404
/// with the feature's code. A client learns that the feature is off, not that this is not Supabase
/// Auth (`route_not_found`). `/.well-known/openid-configuration` describes the OAuth 2.1 server's
/// endpoints, so it is off with them rather than advertising routes that answer 404.
struct DisabledFeatureRoutes {
    struct Feature: Sendable {
        var code: String
        var message: String
        var paths: [String]
    }

    static let features: [Feature] = [
        Feature(code: "saml_provider_disabled", message: "SAML 2.0 is disabled", paths: ["sso", "sso/**", "admin/sso", "admin/sso/**"]),
        Feature(code: "feature_disabled", message: "OAuth server is disabled", paths: [
            "oauth/**", "admin/oauth/**", "user/oauth/**", ".well-known/oauth-authorization-server", ".well-known/openid-configuration",
        ]),
        Feature(code: "feature_disabled", message: "Custom OAuth providers are disabled", paths: ["admin/custom-providers", "admin/custom-providers/**"]),
        Feature(code: "feature_disabled", message: "SCIM server is disabled", paths: ["scim/**"]),
        Feature(code: "passkey_disabled", message: "Passkeys are disabled", paths: ["passkeys", "passkeys/**", "admin/users/:id/passkeys", "admin/users/:id/passkeys/**"]),
    ]

    func add(to group: RouterGroup<ColonyRequestContext>) {
        for feature in Self.features {
            let error = APIError(.notFound, code: feature.code, message: feature.message)
            for path in feature.paths {
                for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
                    group.on(RouterPath(path), method: method) { @Sendable _, _ -> Response in throw error }
                }
            }
        }
    }
}
