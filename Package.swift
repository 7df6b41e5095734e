// swift-tools-version:6.2
import PackageDescription

// Colony: one package, one library + thin executable per service, shared platform in Shared/.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "colony",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "colony-admin", targets: ["ColonyAdmin"]),
        .executable(name: "colony-bench", targets: ["ColonyBench"]),
        .executable(name: "colony-auth", targets: ["ColonyAuth"]),
        .executable(name: "colony-auth-bench", targets: ["AuthBench"]),
        .executable(name: "colony-habits", targets: ["ColonyHabits"]),
        .executable(name: "colony-habits-bench", targets: ["HabitsBench"]),
        .executable(name: "colony-chat", targets: ["ColonyChat"]),
        .executable(name: "colony-chat-bench", targets: ["ChatBench"]),
        .executable(name: "colony-nearby", targets: ["ColonyNearby"]),
        .executable(name: "colony-console", targets: ["ColonyConsole"]),
        .executable(name: "colony-console-bench", targets: ["ConsoleBench"]),
        .executable(name: "colony-nearby-bench", targets: ["NearbyBench"]),
        .executable(name: "colony-projects", targets: ["ColonyProjects"]),
        .executable(name: "colony-projects-bench", targets: ["ProjectsBench"]),
        .executable(name: "colony-circles", targets: ["ColonyCircles"]),
        .executable(name: "colony-circles-bench", targets: ["CirclesBench"]),
        .executable(name: "colony-realtime", targets: ["ColonyRealtime"]),
        .executable(name: "colony-realtime-bench", targets: ["RealtimeBench"]),
        .executable(name: "colony-notifications", targets: ["ColonyNotifications"]),
        .executable(name: "colony-notifications-bench", targets: ["NotificationsBench"]),
        // For the micro-benchmarks' package (Benchmarks/, package-benchmark): the hot paths it measures.
        .library(name: "ColonyModels", targets: ["ColonyModels"]),
        .library(name: "ColonyPlatform", targets: ["ColonyPlatform"]),
        .library(name: "RealtimeService", targets: ["RealtimeService"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // Traces exported over OTLP/HTTP only: the gRPC trait would build grpc-swift into every service.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // Settings: environment, secret files and a JSON settings file as one ConfigReader (EnvironmentReader).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        // Tests speak the generated client (Clients/, the apps' package) over AsyncHTTPClient.
        .package(path: "Clients"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        // Each domain service's handlers implement the protocol generated from its document.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
    ],
    targets: [
        // librdkafka, as Debian's librdkafka-dev installs it.
        .systemLibrary(
            name: "CRdKafka",
            path: "Shared/CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        // libxcrypt, for bcrypt password hashes.
        .systemLibrary(
            name: "CCrypt",
            path: "Shared/CCrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        // Domain types and the event contracts every service shares.
        .target(
            name: "ColonyModels",
            path: "Shared/ColonyModels",
            swiftSettings: swiftSettings
        ),
        // Async Swift over librdkafka: producer and consumer-group consumer.
        .target(
            name: "ColonyKafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/ColonyKafka",
            swiftSettings: swiftSettings
        ),
        // Platform code every service uses: config, HTTP, tokens, errors, health, metrics,
        // Postgres and migrations, outbox, inbox, scheduler.
        .target(
            name: "ColonyPlatform",
            dependencies: [
                "ColonyModels",
                "ColonyKafka",
                // bcrypt for passwords (auth's users, the console's operators).
                "CCrypt",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Every Colony command line (ServiceCommandLine; colony-admin).
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Shared/ColonyPlatform",
            resources: [.embedInCode("OpenAPI/pipeline-admin.openapi.json")],
            swiftSettings: swiftSettings
        ),
        // File storage every service with uploads uses: buckets, filesystem and S3 backends, signed URLs.
        .target(
            name: "ColonyStorage",
            dependencies: [
                "ColonyPlatform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Shared/ColonyStorage",
            swiftSettings: swiftSettings
        ),
        // Moving an app's data from its Supabase project: the source database and Storage, the
        // ledger, the report. Each service's own import code (its Import/ folder) builds on it.
        .target(
            name: "ColonyImport",
            dependencies: [
                "ColonyPlatform",
                "ColonyStorage",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Shared/ColonyImport",
            swiftSettings: swiftSettings
        ),
        // Test support: fresh schemas and topics, token minting, app testing.
        .target(
            name: "ColonyTesting",
            dependencies: [
                "ColonyPlatform",
                "ColonyStorage",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The APNs stand-in: HTTP/2 over TLS with a certificate made on the spot.
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Shared/ColonyTesting",
            swiftSettings: swiftSettings
        ),
        // Tests that speak a service's generated client (Clients/) over AsyncHTTPClient. A target of
        // its own: no benchmark or service executable links the clients' URLSession transport.
        .target(
            name: "ColonyClientTesting",
            dependencies: [
                "ColonyTesting",
                .product(name: "ColonyClient", package: "Clients"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Shared/ColonyClientTesting",
            swiftSettings: swiftSettings
        ),
        // Operator tool (`colony-admin --help`): provisioning, the event pipeline's state (outbox,
        // consumer lag, dead letters), importing an app from Supabase (through each service's
        // own import code).
        .executableTarget(
            name: "ColonyAdmin",
            dependencies: [
                "ColonyPlatform",
                "ColonyKafka",
                // Each service's own code for what the operator does to its data (migrations, keys, imports).
                "AuthService", "CirclesService", "ChatService", "HabitsService", "NearbyService", "ProjectsService", "RealtimeService", "NotificationsService", "ConsoleService",
                "ColonyImport",
                "ColonyStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Shared/ColonyAdmin",
            swiftSettings: swiftSettings
        ),
        // Benchmarks (release builds only, with COLONY_BENCHMARKS=1: see the end): scripts/bench runs them.
        .executableTarget(
            name: "ColonyBench",
            dependencies: ["ColonyPlatform", "ColonyTesting"],
            path: "Tests/Benchmarks/ColonyBench",
            swiftSettings: swiftSettings
        ),
        // Auth: Supabase-Auth-compatible sign-in for every app.
        .target(
            name: "AuthService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                "ColonyStorage",
                "CCrypt",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The SMTP client: STARTTLS or implicit TLS.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Mail and SMS wording, per app and language.
                .product(name: "Mustache", package: "swift-mustache"),
                // colony-auth's command line.
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            path: "Services/Auth/AuthService",
            // Mail and SMS templates (Templates/<locale>/<name>.<part>.mustache), read through
            // Bundle.module; deploy/Dockerfile ships the bundle beside the executables.
            resources: [.copy("Templates")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyAuth",
            dependencies: ["AuthService"],
            path: "Services/Auth",
            exclude: ["AuthService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AuthServiceTests",
            dependencies: [
                "AuthService",
                // Chat's add-by-email asks auth (read-your-writes across services).
                "ChatService",
                "ColonyStorage",
                // The Supabase import's accounts step and engine.
                "ColonyImport",
                "ColonyTesting",
                // The key rotation and revocation tests run the operator's `colony-admin`.
                "ColonyAdmin",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // A silent server for the SMTP client's timeouts.
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/AuthServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "AuthBench",
            dependencies: [
                "AuthService",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/Benchmarks/AuthBench",
            swiftSettings: swiftSettings
        ),
        // Habits: HabitHive's habits, hives and shared streaks.
        .target(
            name: "HabitsService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                // Its part of a user's data export goes to the exports bucket.
                "ColonyStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Services/Habits/HabitsService",
            // The generator's config and the digest of what Generated/ was made from (scripts/generate-openapi).
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            // The OpenAPI document the service serves, compiled into the library.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyHabits",
            dependencies: ["HabitsService"],
            path: "Services/Habits",
            exclude: ["HabitsService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HabitsServiceTests",
            dependencies: [
                "HabitsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The service's generated client (Clients/), which the tests speak.
                .product(name: "HabitsAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/HabitsServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HabitsBench",
            dependencies: [
                "HabitsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/Benchmarks/HabitsBench",
            swiftSettings: swiftSettings
        ),
        // Chat: Unify's groups, messages, unread counts and calendar events.
        .target(
            name: "ChatService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                "ColonyStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Services/Chat/ChatService",
            // The generator's config and the digest of what Generated/ was made from (scripts/generate-openapi).
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            // The OpenAPI document the service serves, compiled into the library.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyChat",
            dependencies: ["ChatService"],
            path: "Services/Chat",
            exclude: ["ChatService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChatServiceTests",
            dependencies: [
                "ChatService",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The service's generated client (Clients/), which the tests speak.
                .product(name: "ChatAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/ChatServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ChatBench",
            dependencies: [
                "ChatService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/Benchmarks/ChatBench",
            swiftSettings: swiftSettings
        ),
        // Circles: MyCirclee's circles, ephemeral posts, DMs and presence.
        .target(
            name: "CirclesService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                "ColonyStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Services/Circles/CirclesService",
            // The generator's config and the digest of what Generated/ was made from (scripts/generate-openapi).
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            // The OpenAPI document the service serves, compiled into the library.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyCircles",
            dependencies: ["CirclesService"],
            path: "Services/Circles",
            exclude: ["CirclesService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CirclesServiceTests",
            dependencies: [
                "CirclesService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The service's generated client (Clients/), which the tests speak.
                .product(name: "CirclesAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/CirclesServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CirclesBench",
            dependencies: [
                "CirclesService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/Benchmarks/CirclesBench",
            swiftSettings: swiftSettings
        ),
        // Nearby: SocialSpot's profiles, location sharing and people within 500 feet.
        .target(
            name: "NearbyService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                "ColonyStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Services/Nearby/NearbyService",
            // The generator's config and the digest of what Generated/ was made from (scripts/generate-openapi).
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            // The OpenAPI document the service serves, compiled into the library.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyNearby",
            dependencies: ["NearbyService"],
            path: "Services/Nearby",
            exclude: ["NearbyService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NearbyServiceTests",
            dependencies: [
                "NearbyService",
                "ColonyImport",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The service's generated client (Clients/), which the tests speak.
                .product(name: "NearbyAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/NearbyServiceTests",
            swiftSettings: swiftSettings
        ),
        // Console: the web console where app owners, support and operators run the apps (issue 38).
        .target(
            name: "ConsoleService",
            dependencies: [
                "ColonyPlatform",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Pages rendered on the server.
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            path: "Services/Console/ConsoleService",
            // Pages and the style sheet, read through Bundle.module (deploy/Dockerfile ships the bundle).
            resources: [.copy("Templates"), .copy("Static")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyConsole",
            dependencies: ["ConsoleService"],
            path: "Services/Console",
            exclude: ["ConsoleService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ConsoleBench",
            dependencies: [
                "ConsoleService",
                "AuthService",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/Benchmarks/ConsoleBench",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ConsoleServiceTests",
            dependencies: [
                "ConsoleService",
                "AuthService",
                "NotificationsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/ConsoleServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NearbyBench",
            dependencies: [
                "NearbyService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/Benchmarks/NearbyBench",
            swiftSettings: swiftSettings
        ),
        // Projects: I Believe In You's builders, projects, posts, support messages and karma.
        .target(
            name: "ProjectsService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                "ColonyStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Services/Projects/ProjectsService",
            // The generator's config and the digest of what Generated/ was made from (scripts/generate-openapi).
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            // The OpenAPI document the service serves, compiled into the library.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyProjects",
            dependencies: ["ProjectsService"],
            path: "Services/Projects",
            exclude: ["ProjectsService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ProjectsServiceTests",
            dependencies: [
                "ProjectsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The service's generated client (Clients/), which the tests speak.
                .product(name: "ProjectsAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/ProjectsServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ProjectsBench",
            dependencies: [
                "ProjectsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/Benchmarks/ProjectsBench",
            swiftSettings: swiftSettings
        ),
        // Realtime: Supabase-Realtime-compatible WebSocket fan-out of domain events.
        .target(
            name: "RealtimeService",
            dependencies: [
                "ColonyPlatform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Metrics", package: "swift-metrics"),
                // FrameLimitHandler sits in NIO's WebSocket pipeline (a close frame for oversized messages).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Services/Realtime/RealtimeService",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyRealtime",
            dependencies: ["RealtimeService"],
            path: "Services/Realtime",
            exclude: ["RealtimeService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RealtimeServiceTests",
            dependencies: [
                "RealtimeService",
                "ChatService",
                "CirclesService",
                "NearbyService",
                "HabitsService",
                "ProjectsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                // The domain services' generated clients (Clients/), which the tests speak.
                .product(name: "ChatAPI", package: "Clients"),
                .product(name: "CirclesAPI", package: "Clients"),
                .product(name: "HabitsAPI", package: "Clients"),
                .product(name: "NearbyAPI", package: "Clients"),
                .product(name: "ProjectsAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/RealtimeServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "RealtimeBench",
            dependencies: [
                "RealtimeService",
                "ChatService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            path: "Tests/Benchmarks/RealtimeBench",
            swiftSettings: swiftSettings
        ),
        // Notifications: device tokens, preferences and APNs pushes for every app.
        .target(
            name: "NotificationsService",
            dependencies: [
                "ColonyPlatform",
                "ColonyImport",
                // Its part of a user's data export goes to the exports bucket.
                "ColonyStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                // colony-notifications' command line.
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Services/Notifications/NotificationsService",
            // The generator's config and the digest of what Generated/ was made from (scripts/generate-openapi).
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            // The OpenAPI document the service serves, compiled into the library; and its console
            // routes' (`ConsolePushRoutes`), which the tests check the routes against.
            resources: [.embedInCode("openapi.json"), .embedInCode("push-admin.openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ColonyNotifications",
            dependencies: ["NotificationsService"],
            path: "Services/Notifications",
            exclude: ["NotificationsService"],
            sources: ["main.swift"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotificationsServiceTests",
            dependencies: [
                "NotificationsService",
                // The end-to-end test runs circles beside it.
                "CirclesService",
                // The trace test runs both services' executables, as an operator does.
                "ColonyCircles",
                "ColonyNotifications",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // The service's generated client (Clients/), which the tests speak.
                .product(name: "NotificationsAPI", package: "Clients"),
                // Circles' client, for the tests that run circles beside it.
                .product(name: "CirclesAPI", package: "Clients"),
                "ColonyClientTesting",
            ],
            path: "Tests/NotificationsServiceTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotificationsBench",
            dependencies: [
                "NotificationsService",
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/Benchmarks/NotificationsBench",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ColonyStorageTests",
            dependencies: [
                "ColonyStorage",
                "ColonyTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/ColonyStorageTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ColonyModelsTests",
            dependencies: ["ColonyModels"],
            path: "Tests/ColonyModelsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ColonyKafkaTests",
            dependencies: ["ColonyKafka", "ColonyTesting"],
            path: "Tests/ColonyKafkaTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ColonyPlatformTests",
            dependencies: [
                "ColonyPlatform",
                "ColonyTesting",
                // Its dead-letter test runs the operator's `colony-admin`.
                "ColonyAdmin",
                "ColonyKafka",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/ColonyPlatformTests",
            swiftSettings: swiftSettings
        ),
    ]
)

// The benchmarks' executables (Tests/Benchmarks) exist only for scripts/bench, which builds them in
// release with COLONY_BENCHMARKS=1. Any other build (swift test, scripts/run, CI) leaves them out:
// a debug build would compile and link ten executables of about 200 MB that nothing runs.
if Context.environment["COLONY_BENCHMARKS"] != "1" {
    let benchmarks = package.products.compactMap { $0 as? Product.Executable }.filter { $0.name.hasSuffix("-bench") }.flatMap(\.targets)
    package.products.removeAll { $0.name.hasSuffix("-bench") }
    package.targets.removeAll { benchmarks.contains($0.name) }
}
