// swift-tools-version: 6.1
import PackageDescription

// Warnings fail the build only where the project's CI asks for it (SUBRECON_WARNINGS_AS_ERRORS=1, set by `.ci/run`):
// an operator's `swift build -c release` with a newer compiler that warns about something new still builds.
let warningsAsErrors: [SwiftSetting] =
    Context.environment["SUBRECON_WARNINGS_AS_ERRORS"] == "1" ? [.unsafeFlags(["-warnings-as-errors"])] : []

let strict: [SwiftSetting] =
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ] + warningsAsErrors

// What `subrecon --version` prints: the tag at HEAD, else the commit (and "-dirty" with uncommitted changes), read
// from the checkout the package is built from; "unknown" outside a git checkout (CSubreconBuildInfo's default).
let buildVersion: String? = Context.gitInformation.map { git in
    let name = git.currentTag ?? String(git.currentCommit.prefix(12))
    return git.hasUncommittedChanges ? name + "-dirty" : name
}
let buildInfoDefines: [CSetting] = buildVersion.map { [.define("SUBRECON_BUILD_VERSION", to: "\"\($0)\"")] } ?? []

let package = Package(
    name: "subrecon",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "subrecon", targets: ["subrecon"]),
        .executable(name: "subrecon-bench", targets: ["subrecon-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(name: "SubreconCore", swiftSettings: strict),
        .target(
            name: "SourceHTTP",
            dependencies: [
                "SubreconCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "RevenueCat",
            dependencies: [
                "SubreconCore", "SourceHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "GooglePlay",
            dependencies: [
                "SubreconCore", "SourceHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Stripe",
            dependencies: [
                "SubreconCore", "SourceHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The job's ports: the protocols it asks its database through and the values they speak (docs/ARCHITECTURE.md,
        // "Ports"). Below the job and the database adapter; links no PostgreSQL driver.
        .target(
            name: "SubreconPorts",
            dependencies: [
                "SubreconCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SubreconDatabase",
            dependencies: [
                "SubreconCore", "SubreconPorts",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "AppStore",
            dependencies: [
                "SubreconCore", "SourceHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Resources/AppleRootCA-G3.pem")],
            swiftSettings: strict
        ),
        .target(
            name: "SubreconReports",
            dependencies: [
                "SubreconCore",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "StoreSimulator",
            dependencies: [
                "SubreconCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // The job: phases, ports, run lifecycle, options. Imports no store client (check-deps holds it to that).
        .target(
            name: "SubreconJob",
            dependencies: [
                "SubreconCore", "SourceHTTP", "SubreconPorts", "SubreconReports",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // What the commands do around the job: the run's metrics (file, Pushgateway), the operator's input files,
        // `products check`. Only the executable links it.
        .target(
            name: "SubreconCommand",
            dependencies: [
                "SubreconPorts", "SubreconJob", "SubreconCore", "SubreconReports",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The composition root: configuration, the store registry and adapters, the commands that build the job.
        .target(
            name: "SubreconApp",
            dependencies: [
                "SubreconPorts", "SubreconJob", "SubreconCore", "SourceHTTP", "RevenueCat", "AppStore", "Stripe", "GooglePlay",
                "SubreconDatabase",
                "SubreconReports",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // `subrecon demo` and LocalPostgres (the bench uses it too): the executable's only link to the simulator.
        .target(
            name: "SubreconDemo",
            dependencies: [
                "SubreconPorts", "SubreconApp", "SubreconJob", "SubreconCore", "SubreconDatabase", "SubreconReports", "StoreSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // What the test targets share (the throwaway schema, the Prometheus text parser, the loopback server, a
        // recording request observer, and the job's ports in memory); nothing in the product.
        // Test targets only: the job's ports in memory (InMemoryDatabase), scripted sources, a clock, a seeded random, the
        // help-text and Prometheus readers. Links no PostgreSQL driver and no HTTP client: the unit lane's kit.
        .target(
            name: "SubreconTestKit",
            dependencies: ["SubreconPorts", "SubreconCore", "SubreconJob"],
            swiftSettings: strict
        ),
        // Test targets only: one world a job test runs in (the loopback store simulators, the real adapters composed as
        // `run` composes them, a report folder) over a database in memory; the PostgreSQL one is SubreconTestSupport's.
        .target(
            name: "SubreconTestWorld",
            dependencies: [
                "SubreconApp", "SubreconJob", "SubreconPorts", "SubreconCore", "SubreconReports", "SubreconTestKit", "StoreSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SubreconTestSupport",
            dependencies: [
                "SubreconTestKit", "SubreconPorts", "SubreconCore", "SubreconDatabase", "SourceHTTP", "StoreSimulator",
                "SubreconApp", "SubreconJob", "SubreconTestWorld",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The version the executable reports (a C string defined at build time, see buildVersion above).
        .target(name: "CSubreconBuildInfo", cSettings: buildInfoDefines),
        .executableTarget(
            name: "subrecon",
            dependencies: [
                "SubreconPorts", "SubreconApp", "SubreconCommand", "SubreconJob", "SubreconCore", "SubreconDatabase", "SubreconReports",
                "SubreconDemo", "CSubreconBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "subrecon-bench",
            dependencies: [
                "SubreconPorts", "SubreconApp", "SubreconJob", "SubreconDatabase", "StoreSimulator", "SubreconCore", "SubreconReports",
                "SubreconDemo",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SubreconCoreTests",
            dependencies: [
                "SubreconTestKit", "SubreconCore", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Golden"],  // golden files of `subrecon explain`, read by path
            swiftSettings: strict
        ),
        .testTarget(
            name: "SubreconReportsTests",
            dependencies: [
                "SubreconTestKit", "SubreconReports", "SubreconCore", .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RevenueCatTests",
            dependencies: [
                "RevenueCat", "SourceHTTP", "StoreSimulator", "SubreconCore", "SubreconTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AppStoreTests",
            dependencies: [
                "AppStore", "SourceHTTP", "StoreSimulator", "SubreconCore", "SubreconTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Vectors"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GooglePlayTests",
            dependencies: [
                "GooglePlay", "SourceHTTP", "StoreSimulator", "SubreconCore", "SubreconTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "StripeTests",
            dependencies: [
                "Stripe", "SourceHTTP", "StoreSimulator", "SubreconCore", "SubreconTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SourceHTTPTests",
            dependencies: [
                "SubreconTestKit", "SourceHTTP", "StoreSimulator", "SubreconCore", "SubreconTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SubreconDatabaseTests",
            dependencies: [
                "SubreconTestKit", "SubreconPorts", "SubreconDatabase", "SubreconCore", "SubreconTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        // The job's rules through the real store adapters and loopback simulators, each test in every backend it can
        // reach: in memory (the unit lane), and PostgreSQL when the test database is configured (the full run).
        .testTarget(
            name: "SubreconJobWorldTests",
            dependencies: [
                "SubreconTestWorld", "SubreconTestSupport", "SubreconApp", "SubreconJob", "SubreconCore", "SubreconPorts",
                "SubreconReports", "StoreSimulator",
            ],
            swiftSettings: strict
        ),
        // The job's own unit tests: no store client, no composition root, no database (its ports in memory).
        .testTarget(
            name: "SubreconJobTests",
            dependencies: [
                "SubreconTestKit", "SubreconPorts", "SubreconJob", "SubreconCore", "SubreconReports",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The command module's tests: files in a temporary folder, no database (the unit lane).
        .testTarget(
            name: "SubreconCommandTests",
            dependencies: [
                "SubreconPorts", "SubreconCommand", "SubreconJob", "SubreconCore", "SubreconReports",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SubreconIntegrationTests",
            dependencies: [
                "SubreconTestKit", "SubreconPorts", "SubreconApp", "SubreconCommand", "SubreconJob", "SubreconDatabase", "StoreSimulator",
                "SubreconCore",
                "SubreconReports",
                "RevenueCat", "AppStore", "SourceHTTP", "Stripe", "GooglePlay",
                "SubreconDemo", "SubreconTestSupport", "SubreconTestWorld",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
    ]
)
