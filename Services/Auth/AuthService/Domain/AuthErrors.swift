import ColonyModels
import ColonyPlatform

/// Supabase Auth's error codes and statuses (API version 2024-01-01: `{"code", "message"}`),
/// which supabase clients turn into typed errors.
enum AuthErrors {
    static let invalidCredentials = APIError(.badRequest, code: "invalid_credentials", message: "Invalid login credentials")
    static let emailNotConfirmed = APIError(.badRequest, code: "email_not_confirmed", message: "Email not confirmed")
    static let phoneNotConfirmed = APIError(.badRequest, code: "phone_not_confirmed", message: "Phone not confirmed")
    static let userAlreadyExists = APIError(.unprocessableContent, code: "user_already_exists", message: "User already registered")
    static let emailOrPhoneTaken = APIError(.unprocessableContent, code: "email_exists", message: "A user with this email address or phone number has already been registered")
    static let userNotFound = APIError(.notFound, code: "user_not_found", message: "User not found")
    static let userBanned = APIError(.badRequest, code: "user_banned", message: "User is banned")
    static let signupDisabled = APIError(.unprocessableContent, code: "signup_disabled", message: "Signups not allowed for this instance")
    static let otpSignupDisabled = APIError(.unprocessableContent, code: "otp_disabled", message: "Signups not allowed for otp")
    static let emailProviderDisabled = APIError(.unprocessableContent, code: "email_provider_disabled", message: "Email logins are disabled")
    static let phoneProviderDisabled = APIError(.unprocessableContent, code: "phone_provider_disabled", message: "Phone logins are disabled")
    static let providerDisabled = APIError(.badRequest, code: "provider_disabled", message: "Provider is not enabled")
    static let otpExpired = APIError(.forbidden, code: "otp_expired", message: "Token has expired or is invalid")
    static let refreshTokenNotFound = APIError(.badRequest, code: "refresh_token_not_found", message: "Invalid Refresh Token: Refresh Token Not Found")
    static let refreshTokenAlreadyUsed = APIError(.badRequest, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used")
    static let sessionExpired = APIError(.badRequest, code: "session_expired", message: "Invalid Refresh Token: Session Expired")
    static let sessionNotFound = APIError(.forbidden, code: "session_not_found", message: "Session from session_id claim in JWT does not exist")
    static let noAuthorization = APIError(.unauthorized, code: "no_authorization", message: "This endpoint requires a Bearer token", headers: [.wwwAuthenticate: "Bearer"])
    static let badJWT = APIError(.unauthorized, code: "bad_jwt", message: "invalid JWT: unable to parse or verify signature", headers: [.wwwAuthenticate: "Bearer"])
    static let notAdmin = APIError(.forbidden, code: "not_admin", message: "User not allowed")
    static let noAPIKey = APIError(.unauthorized, code: "no_api_key", message: "No API key found in request")
    static let invalidAPIKey = APIError(.unauthorized, code: "invalid_api_key", message: "Invalid API key")
    static let flowStateNotFound = APIError(.notFound, code: "flow_state_not_found", message: "invalid flow state, no valid flow state found")
    static let badCodeVerifier = APIError(.badRequest, code: "bad_code_verifier", message: "code challenge does not match previously saved code verifier")
    static let badOAuthCallback = APIError(.badRequest, code: "bad_oauth_callback", message: "The id token could not be verified")
    static let reauthenticationNeeded = APIError(.badRequest, code: "reauthentication_needed", message: "This change requires reauthentication: sign in again, or send the nonce from GET /reauthenticate")
    static let reauthenticationNotValid = APIError(.unprocessableContent, code: "reauthentication_not_valid", message: "Nonce has expired or is invalid")
    static let reauthenticationEmailNotConfirmed = APIError(.unprocessableContent, code: "email_not_confirmed", message: "Please verify your email first.")
    static let reauthenticationPhoneNotConfirmed = APIError(.unprocessableContent, code: "phone_not_confirmed", message: "Please verify your phone first.")
    static let phoneSignupDisabled = APIError(.unprocessableContent, code: "phone_provider_disabled", message: "Phone sign-ups and sign-ins with a password are disabled for this app")
    static let appleNonceRequired = APIError(.badRequest, code: "bad_oauth_callback", message: "Sign in with Apple requires the nonce the app generated (and its SHA-256 in the identity token)")
    static let samePassword = APIError(.unprocessableContent, code: "same_password", message: "New password should be different from the old password.")
    static let senderFailed = APIError(.badGateway, code: "unexpected_failure", message: "Error sending the message; try again later")

    static func validation(_ message: String) -> APIError {
        APIError(.unprocessableContent, code: "validation_failed", message: message)
    }

    static func badRequest(_ message: String) -> APIError {
        APIError(.badRequest, code: "validation_failed", message: message)
    }

    static func weakPassword(reasons: [String], minimumLength: Int) -> APIError {
        APIError(.unprocessableContent, code: "weak_password", message: "Password should be at least \(minimumLength) characters.",
                 details: ["weak_password": .object(["reasons": .array(reasons.map(JSONValue.string))])])
    }

    static func overRequestRateLimit(retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code: "over_request_rate_limit", message: "Request rate limit reached", headers: [.retryAfter: "\(max(1, retryAfter))"])
    }

    /// Too many wrong codes for one recipient, across all their codes.
    static func overVerifyBudget(retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code: "over_request_rate_limit", message: "Too many wrong codes for this address; try again in \(max(1, retryAfter)) seconds",
                 headers: [.retryAfter: "\(max(1, retryAfter))"])
    }

    static func overSendRateLimit(channel: MessageChannel, retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code: channel == .sms ? "over_sms_send_rate_limit" : "over_email_send_rate_limit",
                 message: "For security purposes, you can only request this after \(max(1, retryAfter)) seconds.",
                 headers: [.retryAfter: "\(max(1, retryAfter))"])
    }
}

extension Credentials {
    /// An email address as typed: nil when absent or empty, 422 when malformed.
    static func email(_ raw: String?) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard let email = normalizedEmail(raw) else { throw AuthErrors.validation("Unable to validate email address: invalid format") }
        return email
    }

    /// A phone number as typed: nil when absent or empty, 422 when it is not E.164.
    static func phone(_ raw: String?) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard let phone = normalizedPhone(raw) else { throw AuthErrors.validation("Invalid phone number format (E.164 required)") }
        return phone
    }
}
