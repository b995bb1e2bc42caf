import AsyncHTTPClient
import Foundation
import Logging
import SubreconCore
import SubreconDatabase
import SubreconJob

extension Commands {
    /// `subrecon explain USER_ID` (CONTRACT "Commands"): reads the user's row, asks every configured source exactly as a run
    /// would (same clients, same verification; the receipt bridge reads stored receipts), and explains the verdict at
    /// `asOf`. Changes nothing, queues nothing. Throws `CommandFailure(.noInput)` when the user has no row.
    /// The sources get `deadline` for all their requests together (`--timeout`): past it they are a fetch error.
    public static func explain(
        environment env: ProcessEnvironment, userID: String, asOf: Date, logger: Logger,
        deadline: Duration = RunOptions.Default.explainDeadline
    ) async throws -> Explanation {
        let config = try SubreconConfiguration.load(env, requireSource: true)
        return try await withDatabase(config.database, logger: logger) { unchecked in
            let database = try await checkedUsers(unchecked, configuration: config, writable: false)
            guard let row = try await database.user(id: userID) else {
                throw CommandFailure(.noInput, "user \(SourceText.sanitized(userID).debugDescription) has no row in users")
            }
            if let problem = row.rowError {
                throw CommandFailure(
                    .userErrors,
                    "user \(SourceText.sanitized(userID).debugDescription): row_error: \(problem); no source asked, nothing changed")
            }
            let catalog = try StoredCatalog.checked(try await database.catalog.loadCatalog())
            let context = DecisionContext(asOf: asOf, environment: config.environment, catalog: catalog)
            return try await HTTPClient.withHTTPClient(configuration: httpConfiguration(concurrency: 4)) { http in
                let source = try StoreFactSource(
                    configuration: config, httpClient: http, stats: RequestStats(), logger: logger, receipts: database.receipts,
                    refundsSeen: database.refunds)
                let facts = await ValidationPhase.facts(for: row, from: source, deadline: deadline, what: "explain's deadline")
                let verdict = Decision.decide(row: row, facts: facts, context: context)
                return Explanation(row: row, facts: facts, context: context, verdict: verdict)
            }
        }
    }
}
