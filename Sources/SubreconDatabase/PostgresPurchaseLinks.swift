import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

// Whose purchase it is (CONTRACT "Whose purchase it is"): the accounts stores name, tonight's links and the orphans kept across nights.
// Every statement is one per call, over arrays (unnest); outside text is always bound.

extension PostgresPurchaseLinks {
    /// The users whose `id`, or `account_token` when the relation has it, names each account (CONTRACT "Whose
    /// purchase it is"): an Apple token (`BuyerAccount.ignoresCase`, already lower-cased) compared without case, every
    /// other account exactly, whatever it looks like. An account more than one row claims maps to all of them (ids
    /// sorted); an account no row claims is absent.
    public func owners(ofAccounts accounts: [BuyerAccount]) async throws -> [BuyerAccount: [String]] {
        let held = accounts.filter { normalisedIdentifier($0.value) != nil }  // '' or whitespace is no account
        let exact = Array(Set(held.filter { !$0.ignoresCase }.map(\.value))).sorted()
        let folded = Array(Set(held.filter(\.ignoresCase).map(\.value))).sorted()
        guard !exact.isEmpty || !folded.isEmpty else { return [:] }
        var branches = [
            "select a.v, false, u.id from unnest($1::text[]) as a(v) join users u on u.id = a.v",
            "select a.v, true, u.id from unnest($2::text[]) as a(v) join users u on lower(u.id) = a.v",
        ]
        if users.hasAccountToken {
            branches.append("select a.v, false, u.id from unnest($1::text[]) as a(v) join users u on u.account_token = a.v")
            branches.append("select a.v, true, u.id from unnest($2::text[]) as a(v) join users u on lower(u.account_token) = a.v")
        }
        return try await run("read account owners") {
            var binds = PostgresBindings()
            binds.append(exact)
            binds.append(folded)
            let sql = "select v, f, id from (\(branches.joined(separator: " union "))) as owners(v, f, id) order by v, f, id"
            var owners: [BuyerAccount: [String]] = [:]
            let rows = try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            for try await (value, folds, id) in rows.decode((String, Bool, String).self) {
                owners[BuyerAccount(stated: value, ignoresCase: folds), default: []].append(id)
            }
            return owners
        }
    }

    /// The identifiers among `identifiers` that a row holds in `column` (read only); an app's `users` without the
    /// column holds none, and an empty or whitespace-only identifier is held by no one (`held`).
    public func heldIdentifiers(column: FeedColumn, identifiers: [String]) async throws -> Set<String> {
        let distinct = Self.held(identifiers)
        guard !distinct.isEmpty, users.canMatch(column) else { return [] }
        return try await run("read held identifiers") {
            var binds = PostgresBindings()
            binds.append(distinct)
            let sql = "select distinct \(column.rawValue) from users where \(column.rawValue) = any($1)"
            var held = Set<String>()
            let rows = try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            for try await value in rows.decode(String.self) { held.insert(value) }
            return held
        }
    }

    /// Records tonight's links of `runID` (`reconcile_run_links`, the first link of a user and source kept) and their
    /// users as candidates of the run with reason `linked_purchase`, as `addFeedCandidates` records a feed's, in one
    /// statement; idempotent (a resumed run adds nothing twice).
    public func addLinks(runID: String, _ links: [PurchaseLink]) async throws {
        let kept = links.filter { !$0.userID.isEmpty && !$0.identifier.isEmpty }
        guard !kept.isEmpty else { return }
        try await run("add purchase links") {
            var binds = PostgresBindings()
            binds.append(runID)
            binds.append(CandidateReason.linkedPurchase.rawValue)
            binds.append(kept.map(\.userID))
            binds.append(kept.map(\.origin.rawValue))
            binds.append(kept.map(\.identifier))
            let sql = """
                with linked as (insert into reconcile_run_links (run_id, user_id, origin, identifier) \
                select $1, u, o, i from unnest($3::text[], $4::text[], $5::text[]) with ordinality as x(u, o, i, n) \
                order by n on conflict (run_id, user_id, origin) do nothing) \
                insert into reconcile_run_candidates (run_id, user_id, reasons) \
                select distinct $1, u, array[$2::text] from unnest($3::text[]) as x(u) \
                on conflict (run_id, user_id) do update set reasons = \
                case when $2::text = any(reconcile_run_candidates.reasons) then reconcile_run_candidates.reasons \
                else reconcile_run_candidates.reasons || array[$2::text] end
                """
            try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        }
    }

    /// The links recorded for `runID`, by user and source (a source this build does not know is left out).
    public func links(runID: String) async throws -> [String: [FactOrigin: String]] {
        try await run("read purchase links") {
            var binds = PostgresBindings()
            binds.append(runID)
            let sql = "select user_id, origin, identifier from reconcile_run_links where run_id = $1 order by user_id, origin"
            var links: [String: [FactOrigin: String]] = [:]
            let rows = try await session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            for try await (user, origin, identifier) in rows.decode((String, String, String).self) {
                guard let origin = FactOrigin(rawValue: origin) else { continue }
                links[user, default: [:]][origin] = identifier
            }
            return links
        }
    }
}
