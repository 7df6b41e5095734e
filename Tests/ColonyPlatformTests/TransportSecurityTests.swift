import ColonyKafka
import ColonyPlatform
import ColonyTesting
import Foundation
import PostgresNIO
import Testing

/// Postgres with TLS, certificate and name checked (verify-full), and Kafka's TLS and SASL settings.
@Suite("Transport security")
struct TransportSecurityTests {
    func configuration(_ tls: DatabaseTLS) throws -> DatabaseConfiguration {
        let environment = try TestEnvironment.current()
        return DatabaseConfiguration(host: environment.postgresHost, port: environment.postgresPort, database: environment.postgresDatabase,
                                     user: environment.adminUser, password: environment.adminPassword, schema: "public", poolSize: 1, tls: tls)
    }

    func usesTLS(_ tls: DatabaseTLS) async throws -> Bool {
        let database = Database(configuration: try configuration(tls), logger: TestEnvironment.logger)
        return try await withRunning(database) {
            try await database.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").collect().first?.decode(Bool.self) ?? false
        }
    }

    @Test("verify-full with the cluster's CA connects over TLS; require encrypts without checking; a CA that did not sign the server's certificate is refused")
    func postgresTLS() async throws {
        let ca = try #require(ProcessInfo.processInfo.environment["COLONY_PG_CA_FILE"], "scripts/infra writes COLONY_PG_CA_FILE")
        #expect(try await usesTLS(.verifyFull(caFile: ca)))
        #expect(try await usesTLS(.require))
        #expect(try await usesTLS(.disable) == false)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("colony-other-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = folder.appendingPathComponent("ca.pem").path
        let made = try await ChildProcess.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=someone else",
                                                                   "-keyout", folder.appendingPathComponent("ca.key").path, "-out", other])
        #expect(made.status == 0, "\(made.output)")
        let database = Database(configuration: try configuration(.verifyFull(caFile: other)), logger: TestEnvironment.logger)
        // A connection of its own: the pool would retry until its lease timeout.
        await #expect(throws: (any Error).self) {
            try await database.withDedicatedConnection { _ in }
        }
    }

    @Test("COLONY_PG_SSLMODE and COLONY_PG_SSLROOTCERT are read and checked")
    func databaseSettings() throws {
        #expect(try DatabaseTLS.load(environment: EnvironmentReader([:])) == .disable)
        #expect(try DatabaseTLS.load(environment: EnvironmentReader(["COLONY_PG_SSLMODE": "require"])) == .require)
        #expect(throws: ConfigurationError.self) { try DatabaseTLS.load(environment: EnvironmentReader(["COLONY_PG_SSLMODE": "verify-full"])) }
        #expect(throws: ConfigurationError.self) {
            try DatabaseTLS.load(environment: EnvironmentReader(["COLONY_PG_SSLMODE": "verify-full", "COLONY_PG_SSLROOTCERT": "/nonexistent/ca.pem"]))
        }
        #expect(throws: ConfigurationError.self) { try DatabaseTLS.load(environment: EnvironmentReader(["COLONY_PG_SSLMODE": "prefer"])) }
    }

    @Test("Kafka: TLS with a CA and the broker's name checked, SASL SCRAM with a strong password; PLAIN never in the clear")
    func kafkaSettings() throws {
        #expect(try KafkaSecurity.properties(environment: EnvironmentReader([:])) == ["security.protocol": "plaintext"])
        let ca = try #require(ProcessInfo.processInfo.environment["COLONY_PG_CA_FILE"])  // any readable PEM
        let properties = try KafkaSecurity.properties(environment: EnvironmentReader([
            "COLONY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "COLONY_KAFKA_SSL_CA_FILE": ca,
            "COLONY_KAFKA_SASL_USERNAME": "colony", "COLONY_KAFKA_SASL_PASSWORD": "q8Zt-Lw3v9XmR2pK7yHf",
        ]))
        #expect(properties == ["security.protocol": "sasl_ssl", "ssl.ca.location": ca, "ssl.endpoint.identification.algorithm": "https",
                               "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "colony", "sasl.password": "q8Zt-Lw3v9XmR2pK7yHf"])
        #expect(throws: ConfigurationError.self) {
            try KafkaSecurity.properties(environment: EnvironmentReader(["COLONY_KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "COLONY_KAFKA_SASL_USERNAME": "colony", "COLONY_KAFKA_SASL_PASSWORD": "colony"]))
        }
        #expect(throws: ConfigurationError.self) {
            try KafkaSecurity.properties(environment: EnvironmentReader(["COLONY_KAFKA_SECURITY_PROTOCOL": "sasl_plaintext", "COLONY_KAFKA_SASL_MECHANISM": "PLAIN",
                                                                         "COLONY_KAFKA_SASL_USERNAME": "colony", "COLONY_KAFKA_SASL_PASSWORD": "q8Zt-Lw3v9XmR2pK7yHf"]))
        }
        // librdkafka takes the properties as they are.
        _ = try KafkaProducer(configuration: KafkaConfiguration(bootstrapServers: "127.0.0.1:1", properties: properties), logger: TestEnvironment.logger)
    }
}
