import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresVerdictRecords {
    /// Writes one verdict's truth in a transaction with its `reconcile_changes` audit row and its push intents,
    /// only if the row's `updated_at` is still `verdict.row.updatedAtMicros` (compare-and-set).
    public func apply(_ verdict: Verdict, runID: String) async throws -> ApplyOutcome {
        try await applyDetailed([verdict], runID: runID)[0].outcome
    }

    /// Applies several verdicts in one transaction with a fixed number of set-based statements (one CAS update,
    /// one probe, one audit insert, one intents insert, one ledger update): every row is still compare-and-set on
    /// its own and atomic with its audit row and intents; a lost CAS skips only that row.
    /// A database error rolls back the whole batch and is thrown.
    package func applyBatch(_ verdicts: [Verdict], runID: String) async throws -> [ApplyOutcome] {
        try await applyDetailed(verdicts, runID: runID).map(\.outcome)
    }

    /// `applyBatch` that also tells which intents were queued now (for the run's `push_intents` report).
    ///
    /// With `ledger` true, each verdict's outcome (and the intents it queued) is recorded in `reconcile_verdicts` in the
    /// same transaction, so a resumed run never writes a user twice.
    ///
    /// A privilege missing (SQLSTATE 42501) for some rows' writes (an app's trigger touching a table the role may not
    /// write) is one user's error, not the batch's: the batch is retried a verdict at a time and each verdict refused
    /// so is `permissionDenied`, recorded in the ledger (docs/CONTRACT.md, "Applying").
    public func applyDetailed(_ verdicts: [Verdict], runID: String, ledger: Bool = false) async throws -> [AppliedVerdict] {
        guard verdicts.contains(where: \.changesRow) else {
            return verdicts.map { _ in AppliedVerdict(outcome: .unchanged, queuedIntents: [], deduplicatedIntents: []) }
        }
        do {
            return try await applyInTransaction(verdicts, runID: runID, ledger: ledger)
        } catch DatabaseError.permissionDenied(_, let reason) {
            guard verdicts.count == 1 else {
                var results: [AppliedVerdict] = []
                for verdict in verdicts { results += try await applyDetailed([verdict], runID: runID, ledger: ledger) }
                return results
            }
            logger.error("the database refused a write", metadata: ["user.id": "\(verdicts[0].row.id)", "db.reason": "\(reason)"])
            let refused = AppliedVerdict(outcome: .permissionDenied(reason: reason), queuedIntents: [], deduplicatedIntents: [])
            if ledger {
                let outcome = LedgerOutcome.permissionDenied.rawValue
                try await run("record a refused write") {
                    try await session.query(
                        """
                        update reconcile_verdicts set outcome = \(outcome), queued_intents = '[]'::jsonb \
                        where run_id = \(runID) and user_id = \(verdicts[0].row.id)
                        """, logger: logger)
                }
            }
            return [refused]
        }
    }

    private func applyInTransaction(_ verdicts: [Verdict], runID: String, ledger: Bool) async throws -> [AppliedVerdict] {
        try await run("apply") {
            try await session.withTransaction { connection in
                var setApply = SetApply(runID: runID, ledger: ledger, logger: logger, connection: connection)
                setApply.lockRows = users.isTable
                setApply.identifierColumns = users.presentIdentifierColumns
                var results = verdicts.map { _ in AppliedVerdict(outcome: .unchanged, queuedIntents: [], deduplicatedIntents: []) }
                for group in SetApply.groups(verdicts) {
                    let pending = group.compactMap { index -> (index: Int, verdict: Verdict, truth: Entitlement)? in
                        let verdict = verdicts[index]
                        guard verdict.changesRow, let truth = verdict.truth else { return nil }
                        return (index, verdict, truth)
                    }
                    guard !pending.isEmpty else { continue }
                    let applied = try await setApply.apply(pending.map { ($0.verdict, $0.truth) })
                    for (entry, result) in zip(pending, applied) { results[entry.index] = result }
                }
                return results
            }
        }
    }
}

/// The JSON written to `reconcile_changes.before/after` and `push_intents.payload` (explicit nulls, ISO 8601 UTC
/// dates), as `jsonb`: the key order of the text is immaterial, so it is written in a fixed order (`JSONText`).
enum AuditJSON {
    /// The row before the change; with `columns` (the stores' identifier columns the relation has), their values too.
    static func row(_ row: UserRow, columns: [IdentifierColumn] = []) -> String {
        JSONText.object { json in
            fields(
                &json, tier: row.currentTier, status: row.statusText, endDate: row.endDate, graceEndsAt: row.graceEndsAt,
                source: row.source, productID: row.productID, originalTransactionID: row.originalTransactionID,
                autoRenew: row.autoRenew)
            for column in columns { json.field(column.name, row.identifiers[column.origin]) }
            json.field("updated_at_micros", row.updatedAtMicros)
        }
    }

    /// The row after the change; with `columns`, each identifier column as the update leaves it (the truth's
    /// identifier when `writtenIdentifier` writes one, else the row's own, untouched).
    static func entitlement(_ truth: Entitlement, row: UserRow? = nil, columns: [IdentifierColumn] = []) -> String {
        JSONText.object { json in
            fields(
                &json, tier: truth.tier, status: truth.status.rawValue, endDate: truth.endDate, graceEndsAt: truth.graceEndsAt,
                source: truth.source, productID: truth.productID, originalTransactionID: truth.originalTransactionID,
                autoRenew: truth.autoRenew)
            for column in columns {
                let kept = row?.identifiers[column.origin]
                json.field(column.name, row.flatMap { writtenIdentifier(column, row: $0, truth: truth) } ?? kept)
            }
        }
    }

    /// The value the update writes into `column` (CONTRACT "Whose purchase it is"): the truth's identifier for its store when it has one
    /// that differs from the row's; nil (the column untouched) otherwise, also when the truth's map lacks the store.
    static func writtenIdentifier(_ column: IdentifierColumn, row: UserRow, truth: Entitlement) -> String? {
        guard let value = truth.storeIdentifiers[column.origin], !value.isEmpty, value != row.identifiers[column.origin] else {
            return nil
        }
        return value
    }

    static func payload(_ intent: PushIntent, runID: String) -> String {
        JSONText.object { json in
            json.field("action", intent.kind.appAction)
            json.field("kind", intent.kind.rawValue)
            json.field("period_end", intent.periodEnd)
            json.field("product_id", intent.productID)
            json.field("run_id", runID)
            json.field("tier", intent.tier)
            json.field("user_id", intent.userID)
        }
    }

    /// The drift kinds as a JSON array of their names.
    static func drift(_ drift: [Drift]) -> String { JSONText.array(drift.map(\.rawValue)) }

    private static func fields(
        _ json: inout JSONText, tier: Int, status: String, endDate: Date?, graceEndsAt: Date?, source: String?,
        productID: String?, originalTransactionID: String?, autoRenew: Bool?
    ) {
        json.field("auto_renew", autoRenew)
        json.field("current_tier", tier)
        json.field("grace_period_ends_at", graceEndsAt)
        json.field("iap_original_transaction_id", originalTransactionID)
        json.field("iap_product_id", productID)
        json.field("subscription_end_date", endDate)
        json.field("subscription_source", source)
        json.field("subscription_status", status)
    }
}
