import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

// Line transfers (CONTRACT "Whose purchase it is"): the verdicts naming lines RevenueCat lists under their user while
// other rows name them, and the replacement of those rows' verdicts before anything is applied.

extension PostgresVerdictRecords {
    /// The transfers run `runID`'s verdicts name (`Verdict.transfers`), read from the ledger's JSON.
    public func ledgerTransfers(runID: String) async throws -> [LineTransfer] {
        try await run("read line transfers") {
            let rows = try await session.query(
                """
                select (verdict -> 'transfers')::text from reconcile_verdicts \
                where run_id = \(runID) and verdict ? 'transfers' order by seq
                """, logger: logger)
            var transfers: [LineTransfer] = []
            let decoder = JSONDecoder()
            for try await text in rows.decode(String.self) {
                transfers += try decoder.decode([LineTransfer].self, from: Data(text.utf8))
            }
            return transfers
        }
    }

    /// Replaces each user's verdict in run `runID`'s ledger while it is not applied (an applied one is kept), or
    /// appends it after the ledger's last entry when the user has none; one transaction.
    public func replaceVerdicts(runID: String, _ verdicts: [Verdict]) async throws {
        guard !verdicts.isEmpty else { return }
        let encoder = JSONEncoder()
        let bodies = try verdicts.map { SourceText.jsonbText(try encoder.encode($0)) }
        try await run("replace verdicts") {
            try await session.withTransaction { connection in
                for (verdict, body) in zip(verdicts, bodies) {
                    let user = verdict.row.id
                    try await connection.run(
                        """
                        update reconcile_verdicts set verdict = \(body)::jsonb \
                        where run_id = \(runID) and user_id = \(user) and outcome is null
                        """, logger: logger)
                    try await connection.run(
                        """
                        insert into reconcile_verdicts (run_id, seq, user_id, verdict) \
                        select \(runID), coalesce((select max(seq) + 1 from reconcile_verdicts where run_id = \(runID)), 0), \
                        \(user), \(body)::jsonb \
                        where not exists (select 1 from reconcile_verdicts where run_id = \(runID) and user_id = \(user))
                        """, logger: logger)
                }
            }
        }
    }
}
