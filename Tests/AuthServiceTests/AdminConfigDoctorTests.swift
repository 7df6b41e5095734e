import ColonyKafka
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import AuthService

/// `colony-admin config check` and `doctor`, and the services' command lines, run as an operator
/// runs them: the built executables against the local Postgres, broker and a real SMTP server.
@Suite("colony-admin config check and doctor; service command lines", .serialized)
struct AdminConfigDoctorTests {
    static let pgPassword = "Qm7vT2xK9pL4wR8zN3cH6jY1eF5u"
    static let pepper = "pP4r9Lw2Qz7Xc1Vb8Nm3Kj6Hg5Fd0Sa"
    static let signingKey = "Tz8Yq3Wp6Rn1Lm4Kx9Vb2Jc7Hd5Gf0Sa3Qe"

    /// Everything every service needs, with `COLONY_PG_PASSWORD` and the other secrets set to
    /// values the test then looks for in the output.
    func goodEnvironment() throws -> [String: String] {
        let environment = try TestEnvironment.current()
        return [
            "COLONY_PG_HOST": environment.postgresHost, "COLONY_PG_PORT": String(environment.postgresPort), "COLONY_PG_DATABASE": environment.postgresDatabase,
            "COLONY_PG_PASSWORD": Self.pgPassword, "COLONY_KAFKA_BROKERS": environment.kafkaBrokers,
            "COLONY_JWKS_URL": "http://127.0.0.1:9/auth/v1/.well-known/jwks.json",
            "COLONY_AUTH_PHONE_PEPPER": Self.pepper, "COLONY_HABITS_PHONE_PEPPER": Self.pepper, "COLONY_AUTH_MAIL_DIR": "/tmp/colony-mail",
            "COLONY_STORAGE_SIGNING_KEY": Self.signingKey, "COLONY_STORAGE_PATH": "/tmp/colony-storage",
            "COLONY_CONSOLE_AUTH_URL": "http://127.0.0.1:9",
        ]
    }

    func admin(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(try builtExecutable("colony-admin"), arguments, environment: environment)
    }

    @Test("config check on a complete environment: every service valid, each variable listed, secrets only as their length")
    func configCheckPasses() async throws {
        let result = try await admin(["config", "check", "--secrets-dir", "/nonexistent"], environment: try goodEnvironment())
        #expect(result.status == 0, "\(result.output)")
        for service in ColonyService.allCases {
            #expect(result.output.contains("\(service.rawValue): valid"), "\(service.rawValue): \(result.output)")
        }
        #expect(result.output.contains("every configuration is valid"))
        // Read, listed, defaults shown: a setting left unset and one of a service's own.
        #expect(result.output.contains("COLONY_HTTP_PORT") && result.output.contains("default: 8080"), "\(result.output)")
        #expect(result.output.contains("COLONY_CHAT_MAX_VOICE_BYTES"), "\(result.output)")
        #expect(result.output.contains("COLONY_AUTH_BCRYPT_COST"), "\(result.output)")
        // Secrets: the length, never the value.
        #expect(result.output.contains("set (\(Self.pgPassword.count) chars)"), "\(result.output)")
        #expect(result.output.contains("set (\(Self.pepper.count) chars)"))
        for secret in [Self.pgPassword, Self.pepper, Self.signingKey] {
            #expect(!result.output.contains(secret), "a secret's value was printed")
            #expect(!result.output.contains(String(secret.prefix(8))), "part of a secret's value was printed")
        }
    }

    @Test("config check on a bad environment names every bad variable of each service, never a secret's value, and exits non-zero")
    func configCheckFails() async throws {
        var environment = try goodEnvironment()
        let weakPepper = "Xk9qZp2"  // too short for a secret
        environment["COLONY_HTTP_PORT"] = "eighty"
        environment["LOG_LEVEL"] = "loud"
        environment["COLONY_KAFKA_BROKERS"] = ""  // unset: empty is unset to the services
        environment["COLONY_PG_PASSWORD"] = "password"
        environment["COLONY_AUTH_PHONE_PEPPER"] = weakPepper
        environment["COLONY_AUTH_BCRYPT_COST"] = "99"
        environment["COLONY_AUTH_RATE_SIGNUP_IP"] = "lots"
        environment["COLONY_STORAGE_SIGNING_KEY"] = "short-key-9Xq"
        environment["COLONY_PG_SSLMODE"] = "sometimes"
        let result = try await admin(["config", "check", "--service", "auth", "--service", "chat", "--secrets-dir", "/nonexistent"], environment: environment)
        #expect(result.status != 0, "\(result.output)")
        #expect(result.output.contains("auth: INVALID") && result.output.contains("chat: INVALID"), "\(result.output)")
        #expect(result.output.contains("invalid: auth, chat"), "\(result.output)")
        // Every problem, not only the first: the platform's and each service's own.
        let auth = result.output.components(separatedBy: "chat: INVALID")[0]
        for variable in ["COLONY_HTTP_PORT", "LOG_LEVEL", "COLONY_KAFKA_BROKERS", "COLONY_PG_PASSWORD", "COLONY_PG_SSLMODE",
                         "COLONY_AUTH_PHONE_PEPPER", "COLONY_AUTH_BCRYPT_COST", "COLONY_AUTH_RATE_SIGNUP_IP"] {
            #expect(auth.contains("problem: \(variable) "), "auth: \(variable) not named:\n\(auth)")
        }
        let chat = result.output.components(separatedBy: "chat: INVALID")[1]
        for variable in ["COLONY_HTTP_PORT", "COLONY_KAFKA_BROKERS", "COLONY_PG_PASSWORD", "COLONY_STORAGE_SIGNING_KEY"] {
            #expect(chat.contains("problem: \(variable) "), "chat: \(variable) not named:\n\(chat)")
        }
        #expect(result.output.contains("\"eighty\""), "a malformed plain setting is quoted")
        for secret in [weakPepper, "short-key-9Xq"] {
            #expect(!result.output.contains(secret), "a secret's value was printed:\n\(result.output)")
        }
    }

    @Test("config check reads a secret from <VAR>_FILE and a service's database settings from provision's <service>.env, as the image's entrypoint does")
    func configCheckReadsFilesLikeTheEntrypoint() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("secrets")).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "\(Self.pepper)\n".write(toFile: "\(folder)/pepper", atomically: true, encoding: .utf8)
        try "COLONY_PG_USER=colony_habits\nCOLONY_PG_PASSWORD=\(Self.pgPassword)\nCOLONY_PG_SCHEMA=habits\n".write(toFile: "\(folder)/habits.env", atomically: true, encoding: .utf8)
        var environment = try goodEnvironment()
        environment["COLONY_PG_PASSWORD"] = ""
        environment["COLONY_HABITS_PHONE_PEPPER"] = ""
        environment["COLONY_HABITS_PHONE_PEPPER_FILE"] = "\(folder)/pepper"
        let result = try await admin(["config", "check", "--service", "habits", "--secrets-dir", folder], environment: environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("set (\(Self.pepper.count) chars, from COLONY_HABITS_PHONE_PEPPER_FILE)"), "\(result.output)")
        #expect(result.output.contains("set (\(Self.pgPassword.count) chars, from \(folder)/habits.env)"), "\(result.output)")
        #expect(!result.output.contains(Self.pepper) && !result.output.contains(Self.pgPassword))
    }

    @Test("doctor: auth's database (its role, verify-full TLS, migrations current), the broker and its topics, the JWKS and the SMTP server (STARTTLS, AUTH) pass; a closed broker port fails with the reason")
    func doctor() async throws {
        let ca = try #require(ProcessInfo.processInfo.environment["COLONY_PG_CA_FILE"], "scripts/infra writes COLONY_PG_CA_FILE")
        let smtp = try SMTPServerProcess()
        try await smtp.start(security: .startTLS, user: "colony", password: "Smtp-Secret-4Kq9")
        defer { smtp.stop() }
        try await withRunningAuth { auth in
            // Auth's topic exists once a consumer of it has started; here the test makes it.
            try await KafkaAdmin(configuration: KafkaConfiguration(bootstrapServers: try TestEnvironment.current().kafkaBrokers))
                .createTopics([EventTopics.topic(for: .auth, prefix: auth.topicPrefix)])
            var environment = try goodEnvironment()
            environment.merge([
                "COLONY_PG_USER": auth.database.user, "COLONY_PG_PASSWORD": auth.database.password, "COLONY_PG_SCHEMA": auth.database.schema,
                "COLONY_PG_SSLMODE": "verify-full", "COLONY_PG_SSLROOTCERT": ca,
                "COLONY_TOPIC_PREFIX": auth.topicPrefix, "COLONY_JWKS_URL": "\(auth.authURL)/.well-known/jwks.json",
                "COLONY_AUTH_SMTP_HOST": "127.0.0.1", "COLONY_AUTH_SMTP_PORT": String(smtp.port), "COLONY_AUTH_SMTP_SECURITY": "starttls",
                "COLONY_AUTH_SMTP_CA_FILE": smtp.caFile, "COLONY_AUTH_SMTP_FROM": "Colony <no-reply@colony.test>",
                "COLONY_AUTH_SMTP_USER": "colony", "COLONY_AUTH_SMTP_PASSWORD": "Smtp-Secret-4Kq9",
            ]) { $1 }
            let passing = try await admin(["doctor", "--service", "auth", "--secrets-dir", "/nonexistent"], environment: environment)
            #expect(passing.status == 0, "\(passing.output)")
            let lines = passing.output.split(separator: "\n").map(String.init)
            for check in ["database", "broker", "jwks", "smtp"] {
                #expect(lines.contains { $0.hasPrefix("ok") && $0.contains(" \(check) ") }, "\(check) did not pass:\n\(passing.output)")
            }
            #expect(passing.output.contains("over TLS") && passing.output.contains("migrations current"), "\(passing.output)")
            #expect(passing.output.contains("STARTTLS, AUTH accepted"), "\(passing.output)")
            #expect(smtp.authAttempts().contains { $0.hasSuffix("ok") }, "the SMTP server saw the AUTH")
            #expect(smtp.received().isEmpty, "doctor sends no mail")
            #expect(!passing.output.contains("Smtp-Secret-4Kq9") && !passing.output.contains(auth.database.password))

            // The broker's port closed: the broker check fails, saying why; the others still pass.
            environment["COLONY_KAFKA_BROKERS"] = "127.0.0.1:\(try freePort())"
            let failing = try await admin(["doctor", "--service", "auth", "--secrets-dir", "/nonexistent"], environment: environment)
            #expect(failing.status != 0, "\(failing.output)")
            let broker = try #require(failing.output.split(separator: "\n").first { $0.contains(" broker ") }, "\(failing.output)")
            #expect(broker.hasPrefix("FAIL") && broker.contains("no bootstrap server accepts connections") && broker.lowercased().contains("refused"), "\(broker)")
            #expect(failing.output.split(separator: "\n").contains { $0.hasPrefix("ok") && $0.contains(" database ") }, "\(failing.output)")
        }
    }

    @Test("colony-auth and colony-notifications: --help exits 0, a usage error 2, a configuration error 78 naming the variable")
    func serviceCommandLines() async throws {
        let auth = try builtExecutable("colony-auth")
        let notifications = try builtExecutable("colony-notifications")
        let help = try await ChildProcess.run(auth, ["--help"])
        #expect(help.status == 0 && help.output.contains("keys") && help.output.contains("import"), "\(help.output)")
        let keysHelp = try await ChildProcess.run(auth, ["keys", "--help"])
        #expect(keysHelp.status == 0 && keysHelp.output.contains("--rotate"), "\(keysHelp.output)")
        #expect(try await ChildProcess.run(auth, ["bogus"]).status == 2)
        #expect(try await ChildProcess.run(auth, ["import", "--app", "myspace", "--file", "/tmp/x.json"]).status == 2)
        #expect(try await ChildProcess.run(auth, ["import", "--app", "unify"]).status == 2, "--file is required")

        let notificationsHelp = try await ChildProcess.run(notifications, ["--help"])
        #expect(notificationsHelp.status == 0 && notificationsHelp.output.contains("deliveries"), "\(notificationsHelp.output)")
        #expect(try await ChildProcess.run(notifications, ["deliveries"]).status == 2, "a user id is required")
        #expect(try await ChildProcess.run(notifications, ["deliveries", "not-a-uuid"]).status == 2)
        #expect(try await ChildProcess.run(notifications, ["deliveries", UUID().uuidString, "--limit", "many"]).status == 2)

        // A configuration problem: 78, the variable named.
        let keys = try await ChildProcess.run(auth, ["keys"], environment: [
            "COLONY_PG_HOST": "127.0.0.1", "COLONY_PG_PASSWORD": Self.pgPassword, "COLONY_AUTH_MAIL_DIR": "/tmp/colony-mail", "COLONY_AUTH_PHONE_PEPPER": "",
        ])
        #expect(keys.status == 78 && keys.output.contains("COLONY_AUTH_PHONE_PEPPER"), "\(keys.output)")
        #expect(try await ChildProcess.run(try builtExecutable("colony-chat"), ["bogus"]).status == 2)
        let chatHelp = try await ChildProcess.run(try builtExecutable("colony-chat"), ["--help"])
        #expect(chatHelp.status == 0 && chatHelp.output.contains("config check --service chat"), "\(chatHelp.output)")
        let chat = try await ChildProcess.run(try builtExecutable("colony-chat"), ["serve"], environment: ["COLONY_HTTP_PORT": "eighty", "COLONY_JWKS_URL": "http://127.0.0.1:9/jwks.json"])
        #expect(chat.status == 78 && chat.output.contains("COLONY_HTTP_PORT"), "\(chat.output)")
    }
}
