import Foundation
import PostgresNIO
import SubreconCore

/// Which users a run looks at (SPEC 5.1 and the `run` options), turned into SQL by the store.
public struct CandidateQuery: Sendable, Hashable {
    /// `nightly` is the candidate scan of SPEC 5.1; `backfill` is every user with a subscription row.
    public enum Mode: String, Sendable, Hashable, CaseIterable, Codable {
        case nightly
        case backfill
    }

    public var mode: Mode
    /// The instant T the nightly rules judge by.
    public var asOf: Date
    /// Nightly: lapsed users (`expired`, `canceled`, `refunded`) whose end date is at or after T minus this many days.
    public var lookbackDays: Int
    /// Restricts either mode to these ids (`--users-file`); nil = no restriction.
    public var userIDs: [String]?
    /// Only rows with `subscription_end_date >= endAfter` (either mode).
    public var endAfter: Date?
    /// Only rows with `subscription_end_date < endBefore` (either mode).
    public var endBefore: Date?
    public var shard: ShardSpec

    public init(
        mode: Mode = .nightly, asOf: Date, lookbackDays: Int = 60, userIDs: [String]? = nil, endAfter: Date? = nil,
        endBefore: Date? = nil, shard: ShardSpec = .all
    ) {
        self.mode = mode
        self.asOf = asOf
        self.lookbackDays = lookbackDays
        self.userIDs = userIDs
        self.endAfter = endAfter
        self.endBefore = endBefore
        self.shard = shard
    }

    /// The columns every `UserRow` read selects; `updated_at` as exact integer microseconds since the epoch.
    static let userColumns = """
        id, current_tier, subscription_status, subscription_end_date, grace_period_ends_at, subscription_source, \
        iap_product_id, iap_original_transaction_id, auto_renew, (extract(epoch from updated_at) * 1000000)::bigint, \
        stripe_customer_id, google_purchase_token
        """

    /// `userColumns` for `relation`: an optional column it lacks is selected as `null::text`.
    static func userColumns(_ relation: UsersRelation) -> String {
        guard relation.optionalColumns != Set(UsersContract.optionalColumns) else { return userColumns }
        let required = """
            id, current_tier, subscription_status, subscription_end_date, grace_period_ends_at, subscription_source, \
            iap_product_id, iap_original_transaction_id, auto_renew, (extract(epoch from updated_at) * 1000000)::bigint
            """
        let optional = UsersContract.optionalColumns.map { relation.optionalColumns.contains($0) ? $0 : "null::text" }
        return ([required] + optional).joined(separator: ", ")
    }

    /// One keyset page: `id > lastID order by id limit N` (never OFFSET), so rows inserted or updated while the scan
    /// runs neither shift nor repeat the pages.
    func pageSQL(after lastID: String?, limit: Int, users: UsersRelation = .subreconTable) -> PostgresQuery {
        sql(after: lastID, limit: max(1, limit), users: users)
    }

    /// `select count(*)` over the same selection.
    func countSQL() -> PostgresQuery {
        sql(after: nil, limit: nil, users: .subreconTable)
    }

    /// A page (`limit` given) or the count (`limit` nil) of the selection.
    ///
    /// A nightly page is a union of one ordered index scan per SPEC 5.1 rule (each `id > last order by id limit N`
    /// on the partial index matching the rule), merged with `union all`, de-duplicated by id (`distinct on`, not a
    /// whole-row hash) and cut to N, so a page costs O(N) however large the table is; one `or` of the three rules
    /// would gather and sort every matching user per page.
    private func sql(after lastID: String?, limit: Int?, users: UsersRelation) -> PostgresQuery {
        var binds = PostgresBindings()
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        var rules: [String] = []
        switch mode {
        case .nightly:
            let t = bind(Timestamp(asOf))
            let since = bind(Timestamp(asOf.addingTimeInterval(-Double(lookbackDays) * 86_400)))
            rules = [
                """
                current_tier > 0 and subscription_end_date is not null and subscription_end_date < \(t) \
                and not coalesce(grace_period_ends_at > \(t), false)
                """,
                "subscription_status = 'billing_issue'",
                "subscription_status in ('expired', 'canceled', 'refunded') and subscription_end_date >= \(since)",
            ]
        case .backfill:
            rules = ["(current_tier > 0 or subscription_status <> 'none' or subscription_end_date is not null)"]
        }
        var conditions: [String] = []
        if let userIDs { conditions.append("id = any(\(bind(userIDs)))") }
        if let endAfter { conditions.append("subscription_end_date >= \(bind(Timestamp(endAfter)))") }
        if let endBefore { conditions.append("subscription_end_date < \(bind(Timestamp(endBefore)))") }
        if let shard = shard.sqlPredicate { conditions.append(shard) }
        if let lastID { conditions.append("id > \(bind(lastID))") }
        func whereClause(_ rule: String) -> String { ([rule] + conditions).joined(separator: " and ") }
        guard let limit else {
            let any = rules.count == 1 ? rules[0] : "(" + rules.map { "(\($0))" }.joined(separator: " or ") + ")"
            return PostgresQuery(unsafeSQL: "select count(*) from users where \(whereClause(any))", binds: binds)
        }
        let limitBind = bind(limit)
        let branches = rules.map {
            "(select \(Self.userColumns(users)) from users where \(whereClause($0)) order by id limit \(limitBind))"
        }
        let sql =
            branches.count == 1
            ? String(branches[0].dropFirst().dropLast())
            : "select distinct on (id) * from (\(branches.joined(separator: " union all "))) as candidates order by id limit \(limitBind)"
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
    var micros: Int64 { Int64(((date.timeIntervalSince1970 - 946_684_800) * 1_000_000).rounded()) }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        byteBuffer.writeInteger(micros)
    }
}

extension UserRow {
    /// Decodes a row selected with `CandidateQuery.userColumns`.
    init(postgres row: PostgresRow) throws {
        let (id, tier, status, end, grace, source, product, original, autoRenew, micros, stripe, google) = try row.decode(
            (String, Int, String, Date?, Date?, String?, String?, String?, Bool?, Int64, String?, String?).self)
        self.init(
            id: id, currentTier: tier, status: status, endDate: end.map(roundedToMicros),
            graceEndsAt: grace.map(roundedToMicros), source: source, productID: product,
            originalTransactionID: original, autoRenew: autoRenew, updatedAtMicros: micros,
            stripeCustomerID: stripe.flatMap { $0.isEmpty ? nil : $0 }, googlePurchaseToken: google.flatMap { $0.isEmpty ? nil : $0 })
    }
}

/// Rounds a decoded timestamp to the microsecond so it survives a write/read round trip unchanged.
func roundedToMicros(_ date: Date) -> Date {
    Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
}
