import Logging
import PostgresNIO
import ServiceLifecycle
import SubreconCore
import SubreconDatabase
import SubreconJob
import Synchronization

extension Commands {
    /// Opens a PostgreSQL client for the duration of `body`; an unreachable server is exit 69, a missing schema 78, a
    /// schema newer than this build knows 78 (checked before `body` runs, and by `migrate` before it creates anything).
    /// (`package`: `subrecon demo` seeds its throwaway database through it.)
    ///
    /// The client and `body` run as one swift-service-lifecycle `ServiceGroup`, the client first: the group shuts
    /// its services down in reverse order, so the client is shut down only after `body` has returned (the job's
    /// last writes — the ledger flush, the run's status, the shard lock's release — go through while it runs).
    /// A graceful shutdown of the group (a host's `ServiceGroup` around the caller) calls `onGracefulShutdown`
    /// (`subrecon run`: its `StopSignal`) and lets `body` end by itself; nothing cancels `body`'s task.
    package static func withDatabase<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, requireSchema: Bool = true,
        onGracefulShutdown: @escaping @Sendable () -> Void = {},
        _ body: @escaping @Sendable (SubscriptionDatabase) async throws -> T
    ) async throws -> T {
        do {
            try await SubscriptionDatabase.checkReachable(settings, logger: logger)
        } catch .schemaNotCurrent(let requested, let current) {
            // Not the schema asked for: never "run migrate" (which would create the tables elsewhere), 78.
            throw CommandFailure(.config, DatabaseError.schemaNotCurrent(requested: requested, current: current).description)
        } catch {
            throw CommandFailure(.unavailable, error.description)
        }
        let client = PostgresClient(configuration: settings.clientConfiguration(), backgroundLogger: logger)
        let database = SubscriptionDatabase(
            client: client, logger: logger, identifierColumns: StoreRegistry.identifierColumns, session: settings.session)
        let job = BodyService(onGracefulShutdown: onGracefulShutdown) {
            if requireSchema { try await database.requireSchema() }
            return try await body(database)
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: client, serviceName: "postgres"),
                    // Whether `body` returns or throws, the rest of the group (the client) shuts down gracefully.
                    .init(
                        service: job, successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: "job"),
                ],
                logger: logger))
        do {
            try await group.run()
            guard let result = job.result else { throw CommandFailure(.stopped, "stopped before the command could finish") }
            return result
        } catch {
            throw databaseFailure(error)
        }
    }

    /// What a command reports for `error` from the database (docs/CONTRACT.md, "Exit codes"), `withDatabase`'s and
    /// `doctor`'s one map: a schema newer than the binary (a rolled-back deploy, refused before anything is touched:
    /// "Database"), missing, outdated or not the one asked for, and a missing privilege are 78; unreachable, a refused
    /// certificate and a read-only server 69; anything else as it came.
    static func databaseFailure(_ error: any Error) -> any Error {
        switch error {
        case let newer as SchemaNewerThanBinary:
            return CommandFailure(.config, newer.description)
        case let error as DatabaseError:
            switch error {
            case .schemaMissing, .schemaOutdated, .schemaNotCurrent, .permissionDenied: return CommandFailure(.config, error.description)
            case .unreachable, .certificateRefused, .readOnly: return CommandFailure(.unavailable, error.description)
            default: return error
            }
        default:
            return error
        }
    }
}

/// A command's body as a service of the group that owns the PostgreSQL client; keeps what the body returned.
private final class BodyService<T: Sendable>: Service, CustomStringConvertible {
    let onGracefulShutdown: @Sendable () -> Void
    let body: @Sendable () async throws -> T
    private let value = Mutex<T?>(nil)
    var description: String { "job" }

    init(onGracefulShutdown: @escaping @Sendable () -> Void, body: @escaping @Sendable () async throws -> T) {
        self.onGracefulShutdown = onGracefulShutdown
        self.body = body
    }

    /// What `body` returned; nil until it did.
    var result: T? { value.withLock { $0 } }

    func run() async throws {
        let result = try await withGracefulShutdownHandler {
            try await body()
        } onGracefulShutdown: { [onGracefulShutdown] in
            onGracefulShutdown()
        }
        value.withLock { $0 = result }
    }
}
