import Foundation
import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresVerdictRecords {
    /// Appends verdicts at their scan positions `seqs` (gaps allowed: the ledger reads in seq order) and records
    /// `progress`, atomically. A user already in the run's ledger keeps its first verdict.
    public func appendVerdicts(runID: String, _ verdicts: [Verdict], seqs: [Int64], progress: RunProgress) async throws {
        guard verdicts.count == seqs.count else {
            throw DatabaseError.database(operation: "record verdicts", reason: "\(verdicts.count) verdicts but \(seqs.count) positions")
        }
        let encoder = JSONEncoder()
        let users = verdicts.map(\.row.id)
        let bodies = try verdicts.map { SourceText.jsonbText(try encoder.encode($0)) }
        try await run("record verdicts") {
            try await session.withTransaction { connection in
                if !verdicts.isEmpty {
                    try await connection.run(
                        """
                        insert into reconcile_verdicts (run_id, seq, user_id, verdict) \
                        select \(runID), s, u, v::jsonb from unnest(\(seqs)::bigint[], \(users)::text[], \(bodies)::text[]) as t(s, u, v) \
                        on conflict do nothing
                        """, logger: logger)
                }
                try await connection.run(
                    """
                    update reconcile_runs set validated = \(progress.validated), scan_cursor = \(progress.scanCursor), \
                    scan_done = \(progress.scanDone), held_tier = \(progress.heldTier), \
                    would_lose_tier = \(progress.wouldLoseTier), user_errors = \(progress.userErrors) where id = \(runID)
                    """, logger: logger)
            }
        }
    }

    /// The users in run `runID`'s ledger whose id sorts after `afterUser` (all when nil), and the first free seq.
    /// A stopped run's verdicts past its resume point; the resumed scan skips them.
    public func ledgerTail(runID: String, afterUser: String?) async throws -> LedgerTail {
        try await run("read verdicts") {
            var tail = LedgerTail(userIDs: [], nextSeq: 0)
            let next = try await session.query(
                "select coalesce(max(seq) + 1, 0)::bigint from reconcile_verdicts where run_id = \(runID)", logger: logger)
            for try await value in next.decode(Int64.self) { tail.nextSeq = value }
            let rows = try await session.query(
                """
                select user_id from reconcile_verdicts where run_id = \(runID) \
                and (\(afterUser)::text is null or user_id > \(afterUser)::text)
                """, logger: logger)
            for try await id in rows.decode(String.self) { tail.userIDs.insert(id) }
            return tail
        }
    }

    /// The ledger in seq order, `limit` entries after `afterSeq`, each verdict read back with its outcome and queued
    /// intents.
    public func ledgerPage(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerEntry] {
        try await run("read verdicts") {
            let rows = try await session.query(
                """
                select seq, verdict::text, outcome, queued_intents::text from reconcile_verdicts \
                where run_id = \(runID) and seq > \(afterSeq) order by seq limit \(limit)
                """, logger: logger)
            let decoder = JSONDecoder()
            var entries: [LedgerEntry] = []
            for try await (seq, text, outcome, queued) in rows.decode((Int64, String, String?, String?).self) {
                let verdict = try decoder.decode(Verdict.self, from: Data(text.utf8))
                let intents = try queued.map { $0 == "[]" ? [] : try decoder.decode([PushIntent].self, from: Data($0.utf8)) } ?? []
                entries.append(
                    LedgerEntry(seq: seq, verdict: verdict, outcome: try outcome.map(Self.ledgerOutcome), queuedIntents: intents))
            }
            return entries
        }
    }

    /// The refunds the ledger's verdicts carry, in seq order: the first `limit` entries after `afterSeq` whose
    /// verdict has a non-empty `refunds`, only that array decoded.
    public func ledgerRefunds(runID: String, afterSeq: Int64, limit: Int) async throws -> [LedgerRefunds] {
        try await run("read verdicts") {
            let rows = try await session.query(
                """
                select seq, user_id, (verdict->'refunds')::text from reconcile_verdicts \
                where run_id = \(runID) and seq > \(afterSeq) and jsonb_typeof(verdict->'refunds') = 'array' \
                and verdict->'refunds' <> '[]'::jsonb order by seq limit \(limit)
                """, logger: logger)
            let decoder = JSONDecoder()
            var entries: [LedgerRefunds] = []
            for try await (seq, user, text) in rows.decode((Int64, String, String).self) {
                entries.append(LedgerRefunds(seq: seq, userID: user, refunds: try decoder.decode([SeenRefund].self, from: Data(text.utf8))))
            }
            return entries
        }
    }

    /// Marks entries that need no write (their verdict changes nothing) as done.
    public func markUnchanged(runID: String, seqs: [Int64]) async throws {
        guard !seqs.isEmpty else { return }
        try await run("record outcomes") {
            try await session.query(
                """
                update reconcile_verdicts set outcome = 'unchanged' \
                where run_id = \(runID) and seq = any(\(seqs)::bigint[]) and outcome is null
                """, logger: logger)
        }
    }
}
