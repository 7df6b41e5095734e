// swift-tools-version:6.0
import PackageDescription

// The code generator only: scripts/generate-openapi builds it (in its own .build here) and runs it
// over the services' documents. Kept apart so neither the server nor the client package builds it.
let package = Package(
    name: "colony-clients-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3"),
    ]
)
