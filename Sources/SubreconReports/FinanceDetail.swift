import Foundation
import SubreconCore

/// One counted event of a finance period (docs/CONTRACT.md, "subrecon finance"): a line of the details file. The
/// figures are the sums of these rows by (section, figure, store, currency, basis; shard and night for stocks).
public struct FinanceDetail: Sendable, Hashable {
    public enum Section: String, Sendable, Hashable { case flow, stock }

    /// The figures in report order: the flows, then the stocks.
    public static let figureOrder = [
        "refunds", "restored", "downgraded_refunded", "downgraded_expired", "downgraded_billing_retry_lapsed",
        "downgraded_ownership", "downgraded_product_change", "extended_lapsed", "billing_issue_at_risk", "in_grace",
    ]

    public var section: Section
    public var figure: String
    public var userID: String
    public var store: String
    /// The store transaction (refunds), else the purchase's original transaction or product.
    public var reference: String
    public var runID: String
    /// When it happened: the refund as the source dated it, else the run's as-of.
    public var instant: Date
    public var amount: Decimal?
    public var currency: String
    public var basis: String
    /// The drift kinds behind a change (`;`-joined); empty for a refund.
    public var cause: String
    /// Stocks only: the shard and its night.
    public var shard: String?
    public var night: String?

    public var key: FinanceLine.Key {
        FinanceLine.Key(figure: figure, store: store, currency: currency, basis: basis, shard: shard, night: night)
    }

    /// A refund `refunds_seen` keeps: what was paid (`paid`), `unknown` when the source stated no amount.
    public static func refund(_ refund: SeenRefund, userID: String, runID: String) -> FinanceDetail {
        FinanceDetail(
            section: .flow, figure: "refunds", userID: userID, store: refund.store, reference: refund.transactionID, runID: runID,
            instant: refund.refundedAt, amount: refund.amount, currency: refund.amount == nil ? "unknown" : (refund.currency ?? "unknown"),
            basis: refund.amount == nil ? PriceBasis.unknown.rawValue : PriceBasis.paid.rawValue, cause: "")
    }

    /// An applied change of a counted run, or nil when it is no finance flow. Restored and revoked-by-refund carry the
    /// price the nightly figures carry (`ReportRow`'s `price_amount`, `price_currency`, `price_basis`); the other
    /// downgrades and the extensions the price of the purchase the verdict is about (`paid`), else `unknown`.
    public static func change(_ verdict: Verdict, runID: String, asOf: Date) -> FinanceDetail? {
        guard let figure = changeFigure(verdict) else { return nil }
        let row = ReportRow(runID: runID, verdict: verdict, applied: true)
        var amount: Decimal?
        var currency: String?
        var basis: String
        if !row.financeCategories.isEmpty, figure == "restored" || figure == "downgraded_refunded" {
            amount = row.priceAmount.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
            currency = row.priceCurrency
            basis = row.priceBasis ?? PriceBasis.unknown.rawValue
        } else if let price = verdict.price {
            amount = price.amount
            currency = price.currency.uppercased()
            basis = PriceBasis.paid.rawValue
        } else {
            basis = PriceBasis.unknown.rawValue
        }
        return FinanceDetail(
            section: .flow, figure: figure, userID: verdict.row.id, store: row.store ?? "unknown",
            reference: verdict.truth?.originalTransactionID ?? verdict.row.originalTransactionID ?? row.productID ?? "",
            runID: runID, instant: asOf, amount: amount, currency: currency ?? "unknown", basis: basis,
            cause: row.drift.joined(separator: ";"))
    }

    /// The flow an applied change counts in: restored; a downgrade by its cause; an extension of a lapsed paying user.
    static func changeFigure(_ verdict: Verdict) -> String? {
        switch verdict.action {
        case .restore: return "restored"
        case .extend: return verdict.drift.contains(.missedRenewal) ? "extended_lapsed" : nil
        case .downgrade:
            let drift = Set(verdict.drift)
            if drift.contains(.missedRefund) { return "downgraded_refunded" }
            if (verdict.truth?.tier ?? 0) > 0 { return "downgraded_product_change" }
            if drift.contains(.graceExpired) { return "downgraded_billing_retry_lapsed" }
            if !drift.isDisjoint(with: [.staleIdentifier, .linkedPurchase, .ownershipConflict]) { return "downgraded_ownership" }
            return "downgraded_expired"
        default: return nil
        }
    }

    /// The stock lines of an entitled billing-issue user of a shard's last completed night: revenue at risk (the
    /// nightly figure's price) and, while the grace period lasts at the night's as-of, in grace (same price).
    public static func stocks(_ verdict: Verdict, runID: String, asOf: Date, shard: String, night: String) -> [FinanceDetail] {
        let row = ReportRow(runID: runID, verdict: verdict, applied: true)
        guard row.financeCategories.contains(.billingIssueAtRisk) else { return [] }
        let amount = row.priceAmount.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
        let detail = FinanceDetail(
            section: .stock, figure: "billing_issue_at_risk", userID: verdict.row.id, store: row.store ?? "unknown",
            reference: verdict.truth?.originalTransactionID ?? verdict.row.originalTransactionID ?? row.productID ?? "",
            runID: runID, instant: asOf, amount: amount, currency: row.priceCurrency ?? "unknown",
            basis: row.priceBasis ?? PriceBasis.unknown.rawValue, cause: row.drift.joined(separator: ";"), shard: shard, night: night)
        guard let graceEnds = verdict.truth?.graceEndsAt, graceEnds > asOf else { return [detail] }
        var grace = detail
        grace.figure = "in_grace"
        return [detail, grace]
    }
}
