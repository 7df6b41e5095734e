import Foundation
import NIOSSL
import PostgresNIO

/// How a service talks to Postgres: in the clear (a local cluster), encrypted, or encrypted
/// with the server's certificate checked against a CA and its name against the host
/// (`verify-full`, what a deployment over any network should use).
public enum DatabaseTLS: Sendable, Equatable {
    case disable
    case require
    case verifyFull(caFile: String)

    /// `COLONY_PG_SSLMODE` (`disable`, `require` or `verify-full`; default `disable`) and, for
    /// `verify-full`, `COLONY_PG_SSLROOTCERT` (a PEM file of the CA that signed the server's certificate).
    public static func load(environment: EnvironmentReader) throws(ConfigurationError) -> DatabaseTLS {
        switch environment.string("COLONY_PG_SSLMODE", default: "disable") {
        case "disable": return .disable
        case "require": return .require
        case "verify-full":
            let file = try environment.string("COLONY_PG_SSLROOTCERT")
            if !FileManager.default.isReadableFile(atPath: file) {
                try environment.problem(ConfigurationError(variable: "COLONY_PG_SSLROOTCERT", problem: "names \(file), which cannot be read"))
            }
            return .verifyFull(caFile: file)
        case let other:
            try environment.problem(ConfigurationError(variable: "COLONY_PG_SSLMODE", problem: "must be disable, require or verify-full, got \"\(other)\""))
            return .disable
        }
    }

    /// The TLS client settings (nil for `disable`).
    public func tlsConfiguration() throws -> TLSConfiguration? {
        switch self {
        case .disable:
            return nil
        case .require:
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return tls
        case .verifyFull(let caFile):
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            tls.certificateVerification = .fullVerification
            return tls
        }
    }
}

/// How a service talks to Kafka: librdkafka's `security.protocol` with TLS (a CA file) and SASL
/// (SCRAM), from `COLONY_KAFKA_SECURITY_PROTOCOL` (`plaintext`, `ssl`, `sasl_plaintext`,
/// `sasl_ssl`; default `plaintext`), `COLONY_KAFKA_SSL_CA_FILE`, `COLONY_KAFKA_SASL_MECHANISM`
/// (`SCRAM-SHA-512` by default, `SCRAM-SHA-256`, `PLAIN`), `COLONY_KAFKA_SASL_USERNAME` and
/// `COLONY_KAFKA_SASL_PASSWORD`. The properties go into every producer, consumer and admin client.
public enum KafkaSecurity {
    public static func properties(environment: EnvironmentReader) throws(ConfigurationError) -> [String: String] {
        var protocolName = environment.string("COLONY_KAFKA_SECURITY_PROTOCOL", default: "plaintext").lowercased()
        if !["plaintext", "ssl", "sasl_plaintext", "sasl_ssl"].contains(protocolName) {
            try environment.problem(ConfigurationError(variable: "COLONY_KAFKA_SECURITY_PROTOCOL", problem: "must be plaintext, ssl, sasl_plaintext or sasl_ssl, got \"\(protocolName)\""))
            protocolName = "plaintext"
        }
        var properties = ["security.protocol": protocolName]
        if protocolName.hasSuffix("ssl") {
            if let ca = environment.optionalString("COLONY_KAFKA_SSL_CA_FILE") {
                if !FileManager.default.isReadableFile(atPath: ca) {
                    try environment.problem(ConfigurationError(variable: "COLONY_KAFKA_SSL_CA_FILE", problem: "names \(ca), which cannot be read"))
                }
                properties["ssl.ca.location"] = ca
            }
            properties["ssl.endpoint.identification.algorithm"] = "https"  // the broker's name is checked
        }
        if protocolName.hasPrefix("sasl") {
            let mechanism = environment.string("COLONY_KAFKA_SASL_MECHANISM", default: "SCRAM-SHA-512").uppercased()
            if !["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"].contains(mechanism) {
                try environment.problem(ConfigurationError(variable: "COLONY_KAFKA_SASL_MECHANISM", problem: "must be SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN, got \"\(mechanism)\""))
            }
            if mechanism == "PLAIN" && protocolName == "sasl_plaintext" {
                try environment.problem(ConfigurationError(variable: "COLONY_KAFKA_SASL_MECHANISM", problem: "PLAIN over sasl_plaintext would send the password in the clear; use sasl_ssl"))
            }
            properties["sasl.mechanism"] = mechanism
            properties["sasl.username"] = try environment.string("COLONY_KAFKA_SASL_USERNAME")
            properties["sasl.password"] = try environment.secret("COLONY_KAFKA_SASL_PASSWORD")
        }
        return properties
    }
}
