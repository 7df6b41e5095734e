import Foundation

/// One OAuth/OIDC provider of an app, as the apps file names it under `oauth_providers`:
/// `google`, `apple` and `github` by their names, any other name a standards-compliant OIDC
/// issuer (`kind: "oidc"`). Endpoints default to the real providers'; tests point them at the
/// stand-in provider.
public struct OAuthProviderSettings: Codable, Sendable, Equatable {
    public enum Kind: String, Sendable {
        case google, apple, github, oidc
    }

    /// `oidc`, `google`, `apple` or `github`; by default the provider's name when it is one of
    /// the three, else `oidc`.
    public var kind: String?
    public var enabled: Bool?
    /// The web flow's client (and an accepted audience of id_tokens).
    public var clientId: String
    public var clientSecret: String?
    /// A file holding the client secret (a mounted secret), instead of `client_secret`.
    public var clientSecretFile: String?
    /// More audiences `grant_type=id_token` accepts: the native apps' client ids (Google's iOS
    /// client, Apple's bundle id).
    public var nativeClientIds: [String]?
    /// OIDC: the issuer; its discovery document names the endpoints and the key set.
    public var issuer: String?
    /// Endpoints that override discovery (GitHub: the only source).
    public var authorizeUrl: String?
    public var tokenUrl: String?
    public var userinfoUrl: String?
    public var jwksUrl: String?
    /// GitHub's REST API (`/user`, `/user/emails`).
    public var apiUrl: String?
    /// Scopes asked for unless the request names its own.
    public var scopes: [String]?
    /// Apple web: the client secret is an ES256 JWT made from these when `client_secret` is absent.
    public var teamId: String?
    public var keyId: String?
    public var privateKeyFile: String?

    public init(kind: String? = nil, enabled: Bool? = nil, clientId: String, clientSecret: String? = nil, clientSecretFile: String? = nil, nativeClientIds: [String]? = nil, issuer: String? = nil, authorizeUrl: String? = nil, tokenUrl: String? = nil, userinfoUrl: String? = nil, jwksUrl: String? = nil, apiUrl: String? = nil, scopes: [String]? = nil, teamId: String? = nil, keyId: String? = nil, privateKeyFile: String? = nil) {
        self.kind = kind
        self.enabled = enabled
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.clientSecretFile = clientSecretFile
        self.nativeClientIds = nativeClientIds
        self.issuer = issuer
        self.authorizeUrl = authorizeUrl
        self.tokenUrl = tokenUrl
        self.userinfoUrl = userinfoUrl
        self.jwksUrl = jwksUrl
        self.apiUrl = apiUrl
        self.scopes = scopes
        self.teamId = teamId
        self.keyId = keyId
        self.privateKeyFile = privateKeyFile
    }

    /// The provider's kind, from `kind` or its name.
    public func resolvedKind(name: String) -> Kind? {
        if let kind { return Kind(rawValue: kind.lowercased()) }
        return Kind(rawValue: name) ?? .oidc
    }

    public var isEnabled: Bool { enabled ?? true }

    /// The issuer of its id_tokens: the configured one or the real provider's (nil for GitHub,
    /// which has none).
    public func resolvedIssuer(kind: Kind) -> String? {
        if let issuer, !issuer.isEmpty { return issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer }
        switch kind {
        case .google: return "https://accounts.google.com"
        case .apple: return "https://appleid.apple.com"
        case .github, .oidc: return nil
        }
    }

    /// Every audience an id_token of this provider may carry for the app.
    public var audiences: [String] { [clientId] + (nativeClientIds ?? []) }
}
