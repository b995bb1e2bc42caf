import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

/// Set-based apply of one group of verdicts (user ids unique within the group): a fixed number of statements
/// however many rows, inside the caller's transaction. Each row keeps its own compare-and-set on `updated_at`;
/// only rows whose CAS won get their audit row, intents and `applied` ledger outcome.
struct SetApply {
    let runID: String
    let ledger: Bool
    let logger: Logger
    let connection: PostgresConnection
    /// `users` is a table: rows another writer holds are skipped with `FOR UPDATE SKIP LOCKED`. On a view (an app's
    /// own relation, CONTRACT "Database") PostgreSQL cannot lock through outer joins, so the update relies on its `updated_at`
    /// compare-and-set and on the view's INSTEAD OF trigger (docs/own-tables.md).
    var lockRows = true
    /// The stores' identifier columns the relation has (CONTRACT "Whose purchase it is"): a truth's `storeIdentifiers` are written into
    /// them, each only when it differs from the row's; a column no truth of the group writes is not in the statement.
    var identifierColumns: [IdentifierColumn] = []

    /// Splits `verdicts` into consecutive groups in which no user appears twice, so a repeated user sees the
    /// first write (and loses its CAS) exactly as a row-by-row apply would.
    static func groups(_ verdicts: [Verdict]) -> [[Int]] {
        var groups: [[Int]] = []
        var current: [Int] = []
        var seen = Set<String>()
        for (index, verdict) in verdicts.enumerated() {
            if !seen.insert(verdict.row.id).inserted {
                groups.append(current)
                current = []
                seen = [verdict.row.id]
            }
            current.append(index)
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }

    /// Applies `pending` (verdicts that change their row, each with its truth) and returns a result per verdict.
    func apply(_ pending: [(verdict: Verdict, truth: Entitlement)]) async throws -> [AppliedVerdict] {
        let updated = try await update(pending)
        let missing = pending.map(\.verdict.row.id).filter { !updated.contains($0) }
        let existing = try await probe(missing)
        let unchanged = pending.filter { entry in
            guard case .some(let now) = existing[entry.verdict.row.id] else { return false }
            return now == entry.verdict.row.updatedAtMicros
        }.map(\.verdict.row.id)
        let mayRefuse = unchanged.isEmpty ? false : try await DatabasePreflight.rowSecurityMayRefuse(connection: connection, logger: logger)
        // A row another writer holds also still reads as it was read: told apart from a policy's refusal by a lock.
        let held = mayRefuse && lockRows ? try await heldByOthers(unchanged) : []
        let applied = pending.filter { updated.contains($0.verdict.row.id) }
        try await audit(applied)
        let inserted = try await insertIntents(applied.flatMap(\.verdict.intents))

        var claimed = Set<String>()
        var results: [AppliedVerdict] = []
        for (verdict, _) in pending {
            guard updated.contains(verdict.row.id) else {
                var outcome = ApplyOutcome.notFound
                if case .some(let now) = existing[verdict.row.id] {
                    // Still as it was read and held by no other writer: a policy's doing (docs/CONTRACT.md, "Applying").
                    let refused = now == verdict.row.updatedAtMicros && mayRefuse && !held.contains(verdict.row.id)
                    outcome = refused ? .refusedByPolicy : .concurrentUpdate
                }
                results.append(AppliedVerdict(outcome: outcome, queuedIntents: [], deduplicatedIntents: []))
                continue
            }
            var queued: [PushIntent] = []
            var deduplicated: [PushIntent] = []
            for intent in verdict.intents {
                // The first intent with a key queued it if the insert returned the key; any later one is a duplicate.
                if inserted.contains(intent.dedupeKey), claimed.insert(intent.dedupeKey).inserted {
                    queued.append(intent)
                } else {
                    deduplicated.append(intent)
                }
            }
            results.append(
                AppliedVerdict(
                    outcome: .applied(intentsQueued: queued.count, intentsDeduplicated: deduplicated.count),
                    queuedIntents: queued, deduplicatedIntents: deduplicated))
        }
        for (entry, result) in zip(pending, results) {
            logger.debug(
                "applied verdict",
                metadata: ["user.id": "\(entry.verdict.row.id)", "run.id": "\(runID)", "apply.outcome": "\(result.outcome)"])
        }
        if ledger { try await recordOutcomes(zip(pending, results).map { ($0.0.verdict.row.id, $0.1) }) }
        return results
    }

    /// (a) One compare-and-set update of every row not locked by another writer; returns the ids whose CAS won.
    private func update(_ pending: [(verdict: Verdict, truth: Entitlement)]) async throws -> Set<String> {
        let rows = pending.map { UpdateRow($0.verdict.row, $0.truth, columns: identifierColumns) }
        // Each written identifier column keeps the row's value unless the row's `ids` names it (keys are the column's
        // index, the names trusted constants of the adapters); a column no row writes is left out of the statement.
        let identifierSets = identifierColumns.enumerated().filter { index, _ in rows.contains { $0.ids["\(index)"] != nil } }
            .map { index, column in
                "\(column.name) = coalesce(v.ids ->> '\(index)', u.\(column.name)), "
            }.joined()
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let json = SourceText.jsonbText(try encoder.encode(rows))
        // Rows another writer holds (a webhook's open transaction) are skipped, never waited for: their CAS
        // counts as lost, so they are reported `concurrent_update` and left for the next run.
        let lockCTE =
            lockRows
            ? """
            , locked as (select u.id from users u join v on u.id = v.id \
            where \(Self.readMicros) = v.micros for update of u skip locked)
            """ : ""
        let lockedOnly = lockRows ? " and u.id in (select id from locked)" : ""
        var binds = PostgresBindings()
        binds.append(json)
        let query = PostgresQuery(
            unsafeSQL: """
                with v as (select * from jsonb_to_recordset($1::jsonb) as v(id text, micros bigint, tier int, status text, \
                end_s bigint, end_us bigint, grace_s bigint, grace_us bigint, source text, product text, original text, \
                auto_renew boolean, ids jsonb, keep_end boolean, keep_grace boolean, keep_original boolean))\(lockCTE) \
                update users u set current_tier = v.tier, subscription_status = v.status, \
                subscription_end_date = case when v.keep_end then u.subscription_end_date \
                else to_timestamp(v.end_s) + v.end_us * interval '1 microsecond' end, \
                grace_period_ends_at = case when v.keep_grace then u.grace_period_ends_at \
                else to_timestamp(v.grace_s) + v.grace_us * interval '1 microsecond' end, \
                subscription_source = v.source, iap_product_id = v.product, \
                iap_original_transaction_id = case when v.keep_original then u.iap_original_transaction_id else v.original end, \
                auto_renew = v.auto_renew, \(identifierSets)\
                updated_at = greatest(now(), u.updated_at + interval '1 microsecond') \
                from v where u.id = v.id\(lockedOnly) \
                and \(Self.readMicros) = v.micros \
                returning u.id
                """, binds: binds)
        var ids = Set<String>()
        for try await id in try await connection.run(query, logger: logger).decode(String.self) { ids.insert(id) }
        return ids
    }

    /// `updated_at` of the row `u` as `CandidateQuery.userColumns` reads it (exact microseconds), NULL when no instant
    /// can carry it: such a row was read as that user's `row_error` and is never applied, and one whose `updated_at`
    /// turned infinite after it was read loses its compare-and-set instead of failing the batch.
    static let readMicros = "(case when isfinite(u.updated_at) then (extract(epoch from u.updated_at) * 1000000)::bigint end)"

    /// (b) The rows whose CAS lost that still exist (else: not found), each with its `updated_at` now: changed since
    /// it was read is a concurrent update; unchanged, with row-level security active, a write a policy refused.
    private func probe(_ ids: [String]) async throws -> [String: Int64?] {
        guard !ids.isEmpty else { return [:] }
        var found: [String: Int64?] = [:]
        let rows = try await connection.run(
            PostgresQuery(unsafeSQL: "select u.id, \(Self.readMicros) from users u where u.id = any($1::text[])", binds: binds(ids)),
            logger: logger)
        for try await (id, micros) in rows.decode((String, Int64?).self) { found[id] = .some(micros) }
        return found
    }

    /// The rows among `ids` (not updated, still reading as they were read) that another writer holds, or held when
    /// the update ran: those a `FOR UPDATE NOWAIT` finds taken (SQLSTATE 55P03) or takes now. The rows a policy keeps
    /// from the job's UPDATE are filtered out of the lock by the same policy, so they are neither. Under a savepoint of
    /// the apply's transaction (a taken row fails the statement); a row at a time only when some row is taken.
    private func heldByOthers(_ ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        try await connection.run("savepoint subrecon_probe", logger: logger)
        do {
            var locked = Set<String>()
            let rows = try await connection.run(
                PostgresQuery(unsafeSQL: "select u.id from users u where u.id = any($1::text[]) for update of u nowait", binds: binds(ids)),
                logger: logger)
            for try await id in rows.decode(String.self) { locked.insert(id) }
            try await connection.run("release savepoint subrecon_probe", logger: logger)
            return locked
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
            try await connection.run("rollback to savepoint subrecon_probe", logger: logger)
            try await connection.run("release savepoint subrecon_probe", logger: logger)
            guard ids.count > 1 else { return Set(ids) }
            var held = Set<String>()
            for id in ids { held.formUnion(try await heldByOthers([id])) }
            return held
        }
    }

    private func binds(_ ids: [String]) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(ids)
        return binds
    }

    /// (c) One audit row per updated user, in verdict order.
    private func audit(_ applied: [(verdict: Verdict, truth: Entitlement)]) async throws {
        guard !applied.isEmpty else { return }
        var users: [String] = []
        var befores: [String] = []
        var afters: [String] = []
        var actions: [String] = []
        var drifts: [String] = []
        for (verdict, truth) in applied {
            users.append(verdict.row.id)
            befores.append(AuditJSON.row(verdict.row, columns: identifierColumns))
            afters.append(AuditJSON.entitlement(truth, row: verdict.row, columns: identifierColumns))
            actions.append(verdict.action.rawValue)
            drifts.append(AuditJSON.drift(verdict.drift))
        }
        try await connection.run(
            """
            insert into reconcile_changes (run_id, user_id, before, after, action, drift) \
            select \(runID), u, b::jsonb, a::jsonb, c, array(select jsonb_array_elements_text(d::jsonb)) \
            from unnest(\(users)::text[], \(befores)::text[], \(afters)::text[], \(actions)::text[], \(drifts)::text[]) \
            with ordinality as t(u, b, a, c, d, n) order by n
            """, logger: logger)
    }

    /// (d) Inserts the intents (first of each dedupe key); returns the keys that were queued now.
    private func insertIntents(_ intents: [PushIntent]) async throws -> Set<String> {
        var seen = Set<String>()
        var users: [String] = []
        var kinds: [String] = []
        var keys: [String] = []
        var payloads: [String] = []
        for intent in intents where seen.insert(intent.dedupeKey).inserted {
            users.append(intent.userID)
            kinds.append(intent.kind.rawValue)
            keys.append(intent.dedupeKey)
            payloads.append(AuditJSON.payload(intent, runID: runID))
        }
        guard !keys.isEmpty else { return [] }
        let rows = try await connection.run(
            """
            insert into push_intents (user_id, kind, dedupe_key, payload, run_id) \
            select u, k, d, p::jsonb, \(runID) \
            from unnest(\(users)::text[], \(kinds)::text[], \(keys)::text[], \(payloads)::text[]) with ordinality as t(u, k, d, p, n) \
            order by n on conflict (dedupe_key) do nothing returning dedupe_key
            """, logger: logger)
        var inserted = Set<String>()
        for try await key in rows.decode(String.self) { inserted.insert(key) }
        return inserted
    }

    /// (e) Every verdict's outcome and the intents it queued, in `reconcile_verdicts`.
    private func recordOutcomes(_ outcomes: [(userID: String, result: AppliedVerdict)]) async throws {
        guard !outcomes.isEmpty else { return }
        var users: [String] = []
        var names: [String] = []
        var queued: [String] = []
        for (userID, result) in outcomes {
            users.append(userID)
            names.append(result.outcome.ledgerOutcome.rawValue)
            queued.append(try PostgresVerdictRecords.json(result.queuedIntents))
        }
        try await connection.run(
            """
            update reconcile_verdicts r set outcome = v.o, queued_intents = v.q::jsonb \
            from unnest(\(users)::text[], \(names)::text[], \(queued)::text[]) as v(u, o, q) \
            where r.run_id = \(runID) and r.user_id = v.u
            """, logger: logger)
    }
}

/// One row of the set-based update; timestamps as whole Unix seconds plus microseconds (exact in SQL).
private struct UpdateRow: Encodable {
    var id: String
    var micros: Int64
    var tier: Int
    var status: String
    var endS: Int64?, endUs: Int64?, graceS: Int64?, graceUs: Int64?
    var source: String?, product: String?, original: String?
    var autoRenew: Bool?
    /// The identifiers written, by the index of their column in `SetApply.identifierColumns` (CONTRACT "Whose purchase it is").
    var ids: [String: String] = [:]
    /// The column keeps its stored value: the row was read without one and the truth has none either, so an app's
    /// `infinity` ("no end") or `''` ("none"), which read as NULL, is written over only by a change the truth requires
    /// (docs/CONTRACT.md, Database).
    var keepEnd: Bool, keepGrace: Bool, keepOriginal: Bool

    init(_ row: UserRow, _ truth: Entitlement, columns: [IdentifierColumn]) {
        id = row.id
        micros = row.updatedAtMicros
        tier = truth.tier
        status = truth.status.rawValue
        (endS, endUs) = Self.split(truth.endDate)
        (graceS, graceUs) = Self.split(truth.graceEndsAt)
        source = truth.source
        product = truth.productID
        original = truth.originalTransactionID
        autoRenew = truth.autoRenew
        keepEnd = row.endDate == nil && truth.endDate == nil
        keepGrace = row.graceEndsAt == nil && truth.graceEndsAt == nil
        keepOriginal = row.originalTransactionID == nil && truth.originalTransactionID == nil
        for (index, column) in columns.enumerated() {
            if let value = AuditJSON.writtenIdentifier(column, row: row, truth: truth) { ids["\(index)"] = value }
        }
    }

    /// Unix seconds and the microseconds within them, rounded as `Timestamp` rounds.
    private static func split(_ date: Date?) -> (Int64?, Int64?) {
        guard let date else { return (nil, nil) }
        let unixMicros = Timestamp(date).micros + 946_684_800 * 1_000_000
        let seconds = unixMicros >= 0 ? unixMicros / 1_000_000 : (unixMicros - 999_999) / 1_000_000
        return (seconds, unixMicros - seconds * 1_000_000)
    }
}
