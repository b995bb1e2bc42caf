import AsyncHTTPClient
import Foundation
import Logging
import SubreconCore
import SubreconDatabase

extension Commands {
    /// `subrecon explain USER_ID` (SPEC 5.9): reads the user's row, asks every configured source exactly as a run
    /// would (same clients, same verification; the receipt bridge reads stored receipts), and explains the verdict at
    /// `asOf`. Changes nothing, queues nothing. Throws `CommandFailure(.noInput)` when the user has no row.
    public static func explain(
        environment env: Environment, userID: String, asOf: Date, logger: Logger
    ) async throws -> Explanation {
        let config = try SubreconConfiguration.load(env, requireSource: true)
        return try await withDatabase(config.database, logger: logger) { unchecked in
            let store = try await checkedUsers(unchecked, environment: env)
            guard let row = try await store.user(id: userID) else {
                throw CommandFailure(.noInput, "user \(SourceText.sanitized(userID).debugDescription) has no row in users")
            }
            let catalog = try await store.loadCatalog()
            let context = DecisionContext(asOf: asOf, environment: config.environment, catalog: catalog)
            return try await HTTPClient.withHTTPClient(configuration: httpConfiguration(concurrency: 4)) { http in
                let source = try StoreFactSource(
                    configuration: config, httpClient: http, stats: RequestStats(), logger: logger, receipts: store)
                let facts = await source.facts(for: row)
                let verdict = decide(row: row, facts: facts, context: context)
                return Explanation(row: row, facts: facts, context: context, verdict: verdict)
            }
        }
    }
}

extension Explanation {
    /// The explanation as lines for a terminal.
    public var lines: [String] {
        var out: [String] = []
        out.append("user \(row.id) at \(asOf) (\(environment) run)")
        out.append(
            "  row: tier \(row.tier), \(row.status), ends \(row.endDate ?? "-"), grace \(row.graceEndsAt ?? "-"), "
                + "source \(row.source ?? "-"), product \(row.productID ?? "-"), apple \(row.originalTransactionID ?? "-"), "
                + "stripe \(row.stripeCustomerID ?? "-"), google \(row.googlePurchaseToken == nil ? "-" : "(token set)")")
        if sources.isEmpty { out.append("  sources: none asked (no identifier for any configured source)") }
        for source in sources {
            out.append("  \(source.source): \(source.outcome)")
            for error in source.errors { out.append("    error: \(error)") }
            for entitlement in source.entitlements { out.append("    entitlement \(entitlement)") }
            for p in source.purchases {
                var facts = ["\(p.kind)", "store \(p.store)"]
                if let sandbox = p.sandbox { facts.append(sandbox ? "sandbox" : "production") }
                if let state = p.storeState { facts.append("state \(state)") }
                if let date = p.purchaseDate { facts.append("purchased \(date)") }
                if let date = p.expiresDate { facts.append("expires \(date)") }
                if let date = p.gracePeriodExpiresDate { facts.append("grace until \(date)") }
                if let date = p.refundedAt { facts.append("refunded \(date)") }
                if let renew = p.autoRenew { facts.append(renew ? "auto-renew on" : "auto-renew off") }
                out.append("    \(p.productID): \(facts.joined(separator: ", "))")
                out.append("      → \(p.judged)")
                if let signature = p.signature { out.append("      signature \(signature)") }
            }
        }
        let truth =
            truthTier.map { "tier \($0), \(truthStatus ?? "-"), ends \(truthEndDate ?? "-"), product \(truthProductID ?? "-")" }
            ?? "none formed"
        out.append("  verdict: \(action) [\(drift.joined(separator: ";"))]; truth: \(truth)")
        if let error { out.append("  error: \(error)") }
        for rule in rules { out.append("  \(rule.about): \(rule.rule)") }
        return out
    }
}
