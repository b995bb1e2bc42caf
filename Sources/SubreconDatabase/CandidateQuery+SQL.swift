import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

extension CandidateQuery {
    /// A row's reasons from what the selection stated (`candidate_reasons`: comma-separated, possibly repeated), with
    /// `users_file` when the run is restricted to a users file; sorted, each once (CONTRACT "Reports" `candidate_reason`).
    /// A reason this build does not know (a stored one no build names) is dropped.
    public func reasons(stated text: String?) -> [CandidateReason] {
        reasons(met: (text ?? "").split(separator: ",").compactMap { CandidateReason(rawValue: String($0)) })
    }

    /// The columns every `UserRow` read selects; a timestamp no instant can carry (`infinity`, `-infinity`) as NULL,
    /// `updated_at` as exact integer microseconds since the epoch; then the stores' identifier columns of `relation`,
    /// one it lacks selected as `null::text`; then `account_token` (or `null::text` when the relation has none); last
    /// `timestampColumns`' infinite values as text (else NULL), which `UserRow(postgres:columns:)` judges
    /// (docs/CONTRACT.md, Database: a row the job cannot read is that user's `row_error`, never the night's).
    static func userColumns(_ relation: UsersRelation) -> String {
        let required = """
            id, current_tier, subscription_status, \(finite("subscription_end_date")), \(finite("grace_period_ends_at")), \
            subscription_source, iap_product_id, iap_original_transaction_id, auto_renew, \
            case when isfinite(updated_at) then (extract(epoch from updated_at) * 1000000)::bigint end as updated_at_micros
            """
        let optional = relation.identifierColumns.map { relation.optionalColumns.contains($0.name) ? $0.name : "null::text" }
        let account = relation.hasAccountToken ? "account_token" : "null::text"
        let infinite = timestampColumns.map { "case when not isfinite(\($0)) then \($0)::text end as \($0)_infinite" }
        return ([required] + optional + [account] + infinite).joined(separator: ", ")
    }

    /// The contract's timestamp columns of `users`, in the order `userColumns` selects their infinite values.
    static let timestampColumns = ["subscription_end_date", "grace_period_ends_at", "updated_at"]

    /// `column` (a contract column's name) where it is finite, else NULL, under its own name.
    private static func finite(_ column: String) -> String {
        "case when isfinite(\(column)) then \(column) end as \(column)"
    }

    /// One keyset page: `id > lastID order by id limit N` (never OFFSET), so rows inserted or updated while the scan
    /// runs neither shift nor repeat the pages.
    func pageSQL(after lastID: String?, limit: Int, users: UsersRelation = .subreconTable([])) -> PostgresQuery {
        sql(after: lastID, limit: max(1, limit), users: users)
    }

    /// The two sweeps: the reason, the rows they take, the hash prefix and the period.
    var sweeps: [(reason: String, rows: String, prefix: String, days: Int)] {
        [("sweep", "current_tier > 0", "sweep:", sweepDays), ("sweep_free", "current_tier <= 0", "sweep_free:", sweepFreeDays)]
            .filter { $0.3 > 0 }
    }

    /// Records tonight's sweep shares (this shard's tier holders for `sweep`, its rows without a tier for
    /// `sweep_free`) as candidates of `runID` (idempotent): one statement per sweep that is on.
    func sweepInsertSQL(runID: String) -> [PostgresQuery] {
        guard mode == .nightly else { return [] }
        let shardFilter = shard.sqlPredicate.map { " and \($0)" } ?? ""
        return sweeps.map { sweep in
            var binds = PostgresBindings()
            binds.append(runID)
            binds.append(Self.sweepNight(asOf: asOf, days: sweep.days))
            binds.append(sweep.reason)
            return PostgresQuery(
                unsafeSQL: """
                    insert into reconcile_run_candidates (run_id, user_id, reasons) \
                    select $1, id, array[$3::text] from users where \(sweep.rows) \
                    and \(Self.bucketSQL(prefix: sweep.prefix, days: sweep.days)) = $2\(shardFilter) \
                    on conflict (run_id, user_id) do update set reasons = \
                    case when $3::text = any(reconcile_run_candidates.reasons) then reconcile_run_candidates.reasons \
                    else reconcile_run_candidates.reasons || array[$3::text] end
                    """, binds: binds)
        }
    }

    /// `hash(prefix + id) mod days` in SQL, as `ShardSpec.hash` computes it (the prefix is one of `sweeps`' constants).
    static func bucketSQL(prefix: String, days: Int) -> String {
        "mod(('x' || substr(md5('\(prefix)' || id), 1, 8))::bit(32)::bigint, \(days))"
    }

    /// `select count(*)` over the same selection.
    func countSQL() -> PostgresQuery {
        sql(after: nil, limit: nil, users: .subreconTable([]))
    }

    /// One rule of the selection: the rows it takes (a condition on `users`) and why (a SQL text expression: the
    /// reasons, comma-separated, that `reasons(stated:)` reads).
    struct Rule {
        var reasons: String
        var condition: String
    }

    /// The nightly selection's rules (CONTRACT "Which users a run asks about"), one branch each: the three database
    /// rules, the users feeds named (a dry run's, with their feeds' reasons), and the sweeps tested inline when no run
    /// records its candidates.
    private func nightlyRules(_ binds: inout PostgresBindings) -> [Rule] {
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        let t = bind(Timestamp(asOf))
        let since = bind(Timestamp(asOf.addingTimeInterval(-Double(lookbackDays) * 86_400)))
        // `infinity` in an end date is "no end" and reads as NULL does (docs/CONTRACT.md, Database); `-infinity` is
        // before any T, so its row is read (and is that user's `row_error`).
        var rules = [
            Rule(
                reasons: "'\(CandidateReason.expired)'",
                condition: """
                    current_tier > 0 and subscription_end_date is not null and subscription_end_date < \(t) \
                    and not coalesce(grace_period_ends_at > \(t) and isfinite(grace_period_ends_at), false)
                    """),
            Rule(reasons: "'\(CandidateReason.billingIssue)'", condition: "subscription_status = 'billing_issue'"),
            Rule(
                reasons: "'\(CandidateReason.lapsed)'",
                condition: """
                    subscription_status in ('expired', 'canceled', 'refunded') and subscription_end_date >= \(since) \
                    and subscription_end_date <> 'infinity'
                    """),
        ]
        if let namedUsers, !namedUsers.isEmpty {
            let ids = namedUsers.keys.sorted()
            let (idList, reasonList) = (bind(ids), bind(ids.map { namedUsers[$0, default: []].map(\.rawValue).joined(separator: ",") }))
            rules.append(Rule(reasons: "(\(reasonList)::text[])[array_position(\(idList)::text[], id)]", condition: "id = any(\(idList))"))
        }
        if runCandidatesID == nil {
            for sweep in sweeps {
                let night = bind(Self.sweepNight(asOf: asOf, days: sweep.days))
                rules.append(
                    Rule(
                        reasons: "'\(sweep.reason)'",
                        condition: "\(sweep.rows) and \(Self.bucketSQL(prefix: sweep.prefix, days: sweep.days)) = \(night)"))
            }
        }
        return rules
    }

    /// `--mode backfill`: every user with a subscription row.
    static let backfillRule = Rule(
        reasons: "'\(CandidateReason.backfill)'",
        condition: """
            (current_tier > 0 or subscription_status <> 'none' \
            or (subscription_end_date is not null and subscription_end_date <> 'infinity'))
            """)

    /// A page (`limit` given) or the count (`limit` nil) of the selection.
    ///
    /// A nightly page is a union of one ordered index scan per CONTRACT "Which users a run asks about" rule (each `id > last order by id limit N`
    /// on the partial index matching the rule), merged with `union all`, de-duplicated by id (`distinct on`, not a
    /// whole-row hash) and cut to N, so a page costs O(N) however large the table is; one `or` of the three rules
    /// would gather and sort every matching user per page.
    private func sql(after lastID: String?, limit: Int?, users: UsersRelation) -> PostgresQuery {
        var binds = PostgresBindings()
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        let rules: [Rule] =
            switch mode {
            case .nightly: nightlyRules(&binds)
            case .backfill: [Self.backfillRule]
            }
        var conditions: [String] = []
        if let userIDs { conditions.append("id = any(\(bind(userIDs)))") }
        if let endAfter {
            conditions.append("subscription_end_date >= \(bind(Timestamp(endAfter))) and subscription_end_date <> 'infinity'")
        }
        if let endBefore { conditions.append("subscription_end_date < \(bind(Timestamp(endBefore)))") }
        if let shard = shard.sqlPredicate { conditions.append(shard) }
        if let lastID { conditions.append("id > \(bind(lastID))") }
        func whereClause(_ rule: String) -> String { ([rule] + conditions).joined(separator: " and ") }
        let recorded = mode == .nightly ? runCandidatesID.map(bind) : nil
        guard let limit else {
            var conditions = rules.map(\.condition)
            if let recorded { conditions.append("id in (select user_id from reconcile_run_candidates where run_id = \(recorded))") }
            let any = conditions.count == 1 ? conditions[0] : "(" + conditions.map { "(\($0))" }.joined(separator: " or ") + ")"
            return PostgresQuery(unsafeSQL: "select count(*) from users where \(whereClause(any))", binds: binds)
        }
        let limitBind = bind(limit)
        let columns = Self.userColumns(users)
        var branches = rules.map {
            "(select \(columns), \($0.reasons) as candidate_reasons from users where \(whereClause($0.condition)) "
                + "order by id limit \(limitBind))"
        }
        if let recorded {
            // Driven by the recorded candidates in user order (their primary key), each probing `users` by id: one
            // limit after every filter, so the branch returns exactly the first N qualifying users.
            var after = ""
            if let lastID { after = " and c.user_id > \(bind(lastID))" }
            let filters = conditions.filter { !$0.hasPrefix("id > ") }.map { " and \($0)" }.joined()
            branches.append(
                "(select \(columns), array_to_string(c.reasons, ',') as candidate_reasons from reconcile_run_candidates c "
                    + "join users on users.id = c.user_id where c.run_id = \(recorded)\(after)\(filters) "
                    + "order by c.user_id limit \(limitBind))")
        }
        // Every branch's reasons for a row are gathered before the row is taken once: its last column, which
        // `reasons(stated:)` reads. (A row within the page's first N ids is within every branch's first N that holds it.)
        let sql =
            branches.count == 1
            ? String(branches[0].dropFirst().dropLast())
            : "select distinct on (id) *, string_agg(candidate_reasons, ',') over (partition by id) as all_reasons "
                + "from (\(branches.joined(separator: " union all "))) as candidates order by id limit \(limitBind)"
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

/// A `timestamptz` bind rounded to the microsecond (PostgresNIO's `Date` encoding truncates, which can move an
/// instant like `.123` to `.122999`).
struct Timestamp: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    var date: Date
    init(_ date: Date) { self.date = date }

    static var psqlType: PostgresDataType { .timestamptz }
    static var psqlFormat: PostgresFormat { .binary }

    /// Microseconds since 2000-01-01, PostgreSQL's epoch.
    /// Clamped to PostgreSQL's timestamp range (never traps; the commands keep their dates in 1970–2200).
    var micros: Int64 {
        let value = ((date.timeIntervalSince1970 - 946_684_800) * 1_000_000).rounded()
        guard value.isFinite else { return value > 0 ? Self.maxMicros : -Self.maxMicros }
        return Int64(min(max(value, -Double(Self.maxMicros)), Double(Self.maxMicros)))
    }

    /// About year 294 000: inside `Int64` and past PostgreSQL's largest `timestamptz`.
    static let maxMicros: Int64 = 9_000_000_000_000_000_000

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        byteBuffer.writeInteger(micros)
    }
}

extension UserRow {
    /// Decodes a row selected with `CandidateQuery.userColumns`. A NULL where the contract says not null
    /// (`current_tier`, `subscription_status`, `updated_at`; possible through an app's view) or a value no instant can
    /// carry (`-infinity` in any timestamp, `infinity` in `updated_at`) does not throw: the row comes back with
    /// `rowError` naming the columns (the user's `row_error`, docs/CONTRACT.md, Database). `infinity` in an end date
    /// ("no end") reads as NULL. An identifier or `account_token` that is empty or whitespace only reads as none
    /// (`UserRow.storedIdentifier`). Only a NULL `id` throws.
    init(postgres row: PostgresRow, columns: [IdentifierColumn]) throws {
        let cells = row.makeRandomAccess()
        let id = try cells[0].decode(String.self)
        let tier = try cells[1].decode(Int?.self)
        let status = try cells[2].decode(String?.self)
        let (end, grace) = (try cells[3].decode(Date?.self), try cells[4].decode(Date?.self))
        let (source, product, original) = (
            try cells[5].decode(String?.self), try cells[6].decode(String?.self), try cells[7].decode(String?.self)
        )
        let autoRenew = try cells[8].decode(Bool?.self)
        let micros = try cells[9].decode(Int64?.self)
        var identifiers: [FactOrigin: String] = [:]
        for (offset, column) in columns.enumerated() {
            if let value = UserRow.storedIdentifier(try cells[10 + offset].decode(String?.self)) { identifiers[column.origin] = value }
        }
        let accountToken = try cells[10 + columns.count].decode(String?.self)
        var infinite: [(column: String, value: String)] = []
        for (offset, column) in CandidateQuery.timestampColumns.enumerated() {
            if let value = try cells[11 + columns.count + offset].decode(String?.self) { infinite.append((column, value)) }
        }
        self.init(
            id: id, currentTier: tier ?? 0, status: status ?? "", endDate: end.map(roundedToMicros),
            graceEndsAt: grace.map(roundedToMicros), source: source, productID: product,
            originalTransactionID: UserRow.storedIdentifier(original), autoRenew: autoRenew, updatedAtMicros: micros ?? 0,
            identifiers: identifiers)
        self.accountToken = UserRow.storedIdentifier(accountToken)
        let updatedInfinite = infinite.contains { $0.column == "updated_at" }
        let nulls = [
            ("current_tier", tier == nil), ("subscription_status", status == nil), ("updated_at", micros == nil && !updatedInfinite),
        ]
        .filter(\.1).map(\.0)
        rowError = Self.unreadable(nulls: nulls, infinite: infinite)
    }

    /// Why a row cannot be read as the contract says (docs/CONTRACT.md, Database), or nil: the columns holding a NULL
    /// where it says not null, and those holding a value no instant can carry: `-infinity` anywhere, `infinity` in
    /// `updated_at` (`infinity` in an end date is "no end", read as NULL).
    static func unreadable(nulls: [String], infinite: [(column: String, value: String)]) -> String? {
        var problems: [String] = []
        if !nulls.isEmpty {
            let named = nulls.map { "users.\($0)" }.joined(separator: ", ")
            problems.append("\(named) \(nulls.count == 1 ? "is" : "are") NULL (the contract says not null)")
        }
        for (column, value) in infinite where value != "infinity" || column == "updated_at" {
            problems.append("users.\(column) is \(value) (no instant can carry it)")
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}

/// Rounds a decoded timestamp to the microsecond so it survives a write/read round trip unchanged.
func roundedToMicros(_ date: Date) -> Date {
    Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
}
