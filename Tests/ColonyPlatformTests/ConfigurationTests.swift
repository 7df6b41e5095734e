import ColonyPlatform
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    let complete = [
        "COLONY_PG_HOST": "127.0.0.1", "COLONY_PG_PASSWORD": "Qm7vT2xK9pL4wR8zN3cH6jY1",
        "COLONY_KAFKA_BROKERS": "127.0.0.1:9092", "COLONY_JWKS_URL": "http://127.0.0.1:8081/auth/v1/.well-known/jwks.json",
    ]

    @Test("a complete environment loads with defaults")
    func loads() throws {
        let configuration = try ServiceConfiguration.load(service: .habits, app: .habithive, environment: EnvironmentReader(complete))
        #expect(configuration.httpPort == 8080)
        #expect(configuration.database.user == "colony_habits")
        #expect(configuration.database.schema == "habits")
        #expect(configuration.tokens.audience == .habithive)
    }

    @Test("a missing variable names itself", arguments: ["COLONY_PG_HOST", "COLONY_PG_PASSWORD", "COLONY_KAFKA_BROKERS", "COLONY_JWKS_URL"])
    func missing(variable: String) {
        var values = complete
        values[variable] = nil
        #expect(throws: ConfigurationError.self) {
            try ServiceConfiguration.load(service: .habits, app: .habithive, environment: EnvironmentReader(values))
        }
        do {
            _ = try ServiceConfiguration.load(service: .habits, app: .habithive, environment: EnvironmentReader(values))
        } catch {
            #expect(error.variable == variable)
            #expect(error.description.contains("is required"))
        }
    }

    @Test("malformed values are rejected with the value quoted")
    func malformed() {
        for (name, value) in [("COLONY_HTTP_PORT", "eighty"), ("COLONY_HTTP_PORT", "70000"), ("COLONY_JWKS_URL", "not a url"), ("LOG_LEVEL", "loud")] {
            var values = complete
            values[name] = value
            do {
                _ = try ServiceConfiguration.load(service: .habits, app: .habithive, environment: EnvironmentReader(values))
                Issue.record("\(name)=\(value) was accepted")
            } catch {
                #expect(error.variable == name)
            }
        }
    }
}

@Suite("SQL script splitting")
struct SQLScriptTests {
    @Test("splits at top-level semicolons only")
    func splits() {
        let script = """
            CREATE TABLE a (id int); -- a comment; with a semicolon
            INSERT INTO a VALUES (1); /* block; comment */
            SELECT 'it''s; quoted', "odd;name" FROM a;
            DO $body$ BEGIN PERFORM 1; PERFORM 2; END $body$;
            DO $$ BEGIN NULL; END $$
            """
        #expect(SQLScript.statements(in: script) == [
            "CREATE TABLE a (id int)",
            "INSERT INTO a VALUES (1)",
            #"SELECT 'it''s; quoted', "odd;name" FROM a"#,
            "DO $body$ BEGIN PERFORM 1; PERFORM 2; END $body$",
            "DO $$ BEGIN NULL; END $$",
        ])
    }
}
