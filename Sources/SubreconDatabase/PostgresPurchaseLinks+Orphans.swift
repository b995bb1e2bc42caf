import Foundation
import PostgresNIO
import SubreconCore
import SubreconPorts

extension PostgresPurchaseLinks {
    /// Keeps tonight's orphans (CONTRACT "Reports" `orphans.csv`, 5.10) in `reconcile_orphans`, one row per store and identifier,
    /// in one statement: a new one is first and last seen at `night`; one seen before keeps its `first_seen` (the
    /// earlier of the two), moves `last_seen` to the later night and takes tonight's product, status, end date, account
    /// and price. An identifier given twice is kept once (its first). Returns tonight's orphans as kept, by store and
    /// identifier.
    public func recordOrphans(runID: String, night: Date, _ orphans: [Orphan]) async throws -> [Orphan] {
        var seen = Set<[String]>()
        let unique = orphans.filter { seen.insert([$0.origin.rawValue, $0.identifier]).inserted }
        guard !unique.isEmpty else { return [] }
        var binds = PostgresBindings()
        binds.append(runID)
        binds.append(Timestamp(night))
        // Text arrays throughout ('' for an unknown end date, account or price), cast in SQL.
        binds.append(unique.map(\.origin.rawValue))
        binds.append(unique.map(\.identifier))
        binds.append(unique.map(\.productID))
        binds.append(unique.map(\.status.rawValue))
        binds.append(unique.map { $0.endDate.map(ISO8601.string) ?? "" })
        binds.append(unique.map { $0.accountToken ?? "" })
        binds.append(unique.map { $0.price.map { Self.decimalText($0.amount) } ?? "" })
        binds.append(unique.map { $0.price?.currency ?? "" })
        let sql = """
            insert into reconcile_orphans as o (origin, identifier, product_id, status, end_date, account_token, \
            price_amount, price_currency, first_seen, last_seen, last_run_id) \
            select s, i, p, st, nullif(e, '')::timestamptz, nullif(a, ''), nullif(m, '')::numeric, nullif(c, ''), $2, $2, $1 \
            from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[]) \
            as x(s, i, p, st, e, a, m, c) \
            on conflict (origin, identifier) do update set product_id = excluded.product_id, status = excluded.status, \
            end_date = excluded.end_date, account_token = excluded.account_token, price_amount = excluded.price_amount, \
            price_currency = excluded.price_currency, first_seen = least(o.first_seen, excluded.first_seen), \
            last_seen = greatest(o.last_seen, excluded.last_seen), last_run_id = excluded.last_run_id \
            returning origin, identifier, product_id, status, end_date, account_token, price_amount::text, price_currency, \
            first_seen, last_seen
            """
        return try await run("record orphans") {
            try await Self.decodeOrphans(session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
        }
    }

    /// The orphans run `runID` kept (the last run to see each one), by store and identifier: what a resumed run
    /// lists in `orphans.csv` without reading the feeds again. An orphan a later run saw again is that run's.
    public func orphans(runID: String) async throws -> [Orphan] {
        var binds = PostgresBindings()
        binds.append(runID)
        let sql = """
            select origin, identifier, product_id, status, end_date, account_token, price_amount::text, price_currency, \
            first_seen, last_seen from reconcile_orphans where last_run_id = $1
            """
        return try await run("read orphans") {
            try await Self.decodeOrphans(session.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger))
        }
    }

    /// `reconcile_orphans` rows (origin, identifier, product, status, end, account, price text, currency, first and
    /// last seen) as orphans, by store and identifier; a row of an unknown store or status is left out.
    static func decodeOrphans(_ rows: CollectedRows) async throws -> [Orphan] {
        var kept: [Orphan] = []
        typealias Columns = (String, String, String, String, Date?, String?, String?, String?, Date, Date)
        for try await (origin, identifier, product, status, end, account, amount, currency, first, last) in rows.decode(
            Columns.self)
        {
            guard let origin = FactOrigin(rawValue: origin), let status = SubscriptionStatus(rawValue: status) else {
                continue
            }
            let price: Money? =
                if let amount, let currency, let value = Decimal(string: amount, locale: Locale(identifier: "en_US_POSIX")) {
                    Money(amount: value, currency: currency)
                } else { nil }
            kept.append(
                Orphan(
                    origin: origin, identifier: identifier, productID: product, status: status,
                    endDate: end.map(roundedToMicros), accountToken: account, price: price,
                    firstSeen: roundedToMicros(first), lastSeen: roundedToMicros(last)))
        }
        return kept.sorted { ($0.origin.rawValue, $0.identifier) < ($1.origin.rawValue, $1.identifier) }
    }
}
