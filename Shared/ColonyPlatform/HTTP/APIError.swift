import ColonyModels
import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime

/// The one error shape every Colony endpoint answers with: `{"code", "message"}` and a status.
public struct APIError: Error, HTTPResponseError, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var headers: HTTPFields
    /// Further fields some APIs add beside code and message (Supabase Auth's `weak_password`).
    public var details: [String: JSONValue]

    public init(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:], details: [String: JSONValue] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.details = details
    }

    public static func badRequest(_ message: String, code: String = "bad_request") -> APIError {
        APIError(.badRequest, code: code, message: message)
    }

    public static func unauthorized(_ message: String, code: String = "unauthorized") -> APIError {
        APIError(.unauthorized, code: code, message: message, headers: [.wwwAuthenticate: "Bearer"])
    }

    public static func forbidden(_ message: String, code: String = "forbidden") -> APIError {
        APIError(.forbidden, code: code, message: message)
    }

    public static func notFound(_ message: String = "not found", code: String = "not_found") -> APIError {
        APIError(.notFound, code: code, message: message)
    }

    public static func conflict(_ message: String, code: String = "conflict") -> APIError {
        APIError(.conflict, code: code, message: message)
    }

    public static func unprocessable(_ message: String, code: String = "validation_failed") -> APIError {
        APIError(.unprocessableContent, code: code, message: message)
    }

    public static func tooManyRequests(retryAfterSeconds: Int, message: String = "too many requests, try again later") -> APIError {
        APIError(.tooManyRequests, code: "rate_limited", message: message, headers: [.retryAfter: "\(max(1, retryAfterSeconds))"])
    }

    public static func payloadTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, code: "payload_too_large", message: "request body exceeds \(limit) bytes")
    }

    /// 405 with `Allow` naming the methods the path does serve.
    public static func methodNotAllowed(_ allowed: [String]) -> APIError {
        APIError(.methodNotAllowed, code: "method_not_allowed", message: "this path serves \(allowed.joined(separator: ", ")) only",
                 headers: [.allow: allowed.joined(separator: ", ")])
    }

    public static let internalError = APIError(.internalServerError, code: "internal_error", message: "something went wrong on our side")

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        errorResponse()
    }

    /// The JSON response for any error a handler threw; unexpected ones (500) are logged with
    /// their details, which never reach the client.
    public static func response(for error: any Error, logger: Logger) -> Response {
        let apiError = APIError.from(error)
        if apiError.status.code >= 500 {
            logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        return apiError.errorResponse()
    }

    /// The JSON response for this error.
    public func errorResponse() -> Response {
        var body = details
        body["code"] = .string(code)
        body["message"] = .string(message)
        let data = (try? ColonyJSON.encode(body)).map { Data($0) } ?? Data("{}".utf8)
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension APIError {
    /// Maps any error to the API's shape: our own errors as they are, Hummingbird's (unknown
    /// route, bad body) by status, anything else a 500 whose details stay in the log.
    public static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as ValidationErrors:
            return .unprocessable(error.description)
        case let error as ServerError:
            // A generated route: the handler's or a middleware's own error, or the request not
            // matching the document (a body or parameter that does not decode: 400 or 422 as for
            // any body; a missing body or a content type the operation does not take, its status).
            switch error.underlyingError {
            case let decoding as DecodingError:
                return ColonyRequestDecoder.apiError(forGenerated: decoding)
            case let underlying where underlying is any HTTPResponseConvertible && !(underlying is ServerError):
                guard error.httpStatus.code < 500 else { return .internalError }
                // A body the operation does not take: the documents' 422, as uploads have always said.
                if error.httpStatus == .unsupportedMediaType {
                    return .unprocessable(error.causeDescription, code: "unsupported_media_type")
                }
                return APIError(error.httpStatus, code: code(for: error.httpStatus), message: error.causeDescription)
            case let underlying:
                let mapped = from(underlying)
                // Not ours and before the handler had an input: the runtime could not read the
                // request (a query item without `=`, say), the caller's 400 and not a 500.
                if mapped.status == .internalServerError, error.operationInput == nil {
                    return .badRequest("the request cannot be read (a malformed query or path)")
                }
                return mapped
            }
        case let error as HTTPError where error.status == .notFound && error.body == nil:
            // The router found no route: a distinct code, so clients (and the OpenAPI tests)
            // can tell a missing route from a missing record.
            return APIError(.notFound, code: "route_not_found", message: "no route for this method and path")
        case let error as HTTPError:
            return APIError(error.status, code: code(for: error.status), message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        case let error as any HTTPResponseError:
            return APIError(error.status, code: code(for: error.status), message: error.status.reasonPhrase)
        default:
            return .internalError
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 409: "conflict"
        case 413: "payload_too_large"
        case 422: "validation_failed"
        case 429: "rate_limited"
        case 500...: "internal_error"
        default: "error"
        }
    }
}

/// Field-level input problems collected by a validator and answered together as one 422.
public struct ValidationErrors: Error, CustomStringConvertible, Sendable {
    public private(set) var problems: [String] = []

    public init() {}

    public mutating func check(_ condition: Bool, _ problem: @autoclosure () -> String) {
        if !condition { problems.append(problem()) }
    }

    public var isEmpty: Bool { problems.isEmpty }

    /// Throws when any check failed.
    public func throwIfAny() throws(ValidationErrors) {
        if !problems.isEmpty { throw self }
    }

    public var description: String { problems.joined(separator: "; ") }
}
