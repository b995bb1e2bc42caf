import Foundation

/// What `subrecon explain USER_ID` shows (CONTRACT "Commands"): the row, each source's evidence as stated and judged at T, the
/// verdict, and for every drift kind and the action the rule that produced it. Pure: built from the same row, facts
/// and context `decide` used.
public struct Explanation: Sendable, Encodable, Hashable {
    public struct Row: Sendable, Encodable, Hashable {
        public var id: String
        public var tier: Int
        public var status: String
        public var endDate: String?
        public var graceEndsAt: String?
        public var source: String?
        public var productID: String?
        public var originalTransactionID: String?
        /// The stores' identifier columns (`IdentifierColumn`), each with the row's value (nil: none); encoded under
        /// the column's name when present.
        public var identifiers: [Identifier]
        public var autoRenew: Bool?

        enum CodingKeys: String, CodingKey {
            case id
            case tier = "current_tier"
            case status = "subscription_status"
            case endDate = "subscription_end_date"
            case graceEndsAt = "grace_period_ends_at"
            case source = "subscription_source"
            case productID = "iap_product_id"
            case originalTransactionID = "iap_original_transaction_id"
            case autoRenew = "auto_renew"
        }

        /// One identifier column and the row's value in it (nil: none).
        public struct Identifier: Sendable, Hashable {
            public var column: IdentifierColumn
            public var value: String?
        }

        struct ColumnKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(tier, forKey: .tier)
            try container.encode(status, forKey: .status)
            try container.encodeIfPresent(endDate, forKey: .endDate)
            try container.encodeIfPresent(graceEndsAt, forKey: .graceEndsAt)
            try container.encodeIfPresent(source, forKey: .source)
            try container.encodeIfPresent(productID, forKey: .productID)
            try container.encodeIfPresent(originalTransactionID, forKey: .originalTransactionID)
            try container.encodeIfPresent(autoRenew, forKey: .autoRenew)
            var columns = encoder.container(keyedBy: ColumnKey.self)
            for identifier in identifiers {
                try columns.encodeIfPresent(identifier.value, forKey: ColumnKey(stringValue: identifier.column.name))
            }
        }
    }

    /// One purchase as its source stated it, and how it is judged at T.
    public struct Purchase: Sendable, Codable, Hashable {
        public var productID: String
        public var store: String
        public var kind: String
        public var sandbox: Bool?
        public var purchaseDate: String?
        public var expiresDate: String?
        public var gracePeriodExpiresDate: String?
        public var refundedAt: String?
        public var storeState: String?
        public var autoRenew: Bool?
        public var originalTransactionID: String?
        public var transactionID: String?
        /// "entitled (active) until …", "not entitled (expired)", or "unknown: reason".
        public var judged: String
        /// The price as the source stated it (`9.99 USD`), when it did.
        public var price: String?
        /// For Apple's facts: the signed payload was verified before it was believed.
        public var signature: String?

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case store, kind, sandbox
            case purchaseDate = "purchase_date"
            case expiresDate = "expires_date"
            case gracePeriodExpiresDate = "grace_period_expires_date"
            case refundedAt = "refunded_at"
            case storeState = "store_state"
            case autoRenew = "auto_renew"
            case originalTransactionID = "original_transaction_id"
            case transactionID = "transaction_id"
            case judged, price, signature
        }
    }

    /// What one source said.
    public struct SourceEvidence: Sendable, Codable, Hashable {
        /// As in the `sources` column.
        public var source: String
        /// `answered`, `unknown` (the source does not know the identifier), `error`.
        public var outcome: String
        public var purchases: [Purchase]
        /// RevenueCat's entitlements (`identifier: product until …`).
        public var entitlements: [String]
        public var errors: [String]
    }

    public struct Rule: Sendable, Codable, Hashable {
        /// `action:downgrade`, `drift:missed_expiration`, ...
        public var about: String
        public var rule: String
    }

    public var asOf: String
    public var environment: String
    public var row: Row
    public var sources: [SourceEvidence]
    public var action: String
    public var drift: [String]
    public var truthTier: Int?
    public var truthStatus: String?
    public var truthEndDate: String?
    public var truthProductID: String?
    public var error: String?
    public var rules: [Rule]
    /// The purchase lines the sources spoke about (CONTRACT "Whose purchase it is").
    public var lines: [Line]

    enum CodingKeys: String, CodingKey {
        case asOf = "as_of"
        case environment, row, sources, action, drift
        case truthTier = "truth_tier"
        case truthStatus = "truth_status"
        case truthEndDate = "truth_end_date"
        case truthProductID = "truth_product_id"
        case error, rules, lines
    }

    /// True when a source errored for the user (`explain` exits 1), including lookups cut off by explain's deadline
    /// before any source answered (no source evidence then, only the verdict's fetch error).
    public var sourceErrored: Bool {
        sources.contains { $0.outcome == "error" } || drift.contains(Drift.fetchError.rawValue)
            || drift.contains(Drift.verificationFailed.rawValue)
    }

    /// - Parameter columns: the stores' identifier columns, in the registry's order (the row line shows each).
    public init(row: UserRow, facts: SourceFacts, context: DecisionContext, verdict: Verdict, columns: [IdentifierColumn] = []) {
        let asOf = context.asOf
        let date = Self.date
        self.asOf = ISO8601.string(asOf)
        environment = context.environment.rawValue
        self.row = Row(
            id: row.id, tier: row.currentTier, status: row.statusText, endDate: date(row.endDate),
            graceEndsAt: date(row.graceEndsAt), source: row.source, productID: row.productID,
            originalTransactionID: row.originalTransactionID,
            identifiers: columns.map { Row.Identifier(column: $0, value: row.identifiers[$0.origin]) }, autoRenew: row.autoRenew)
        self.sources = Self.evidence(facts: facts, asOf: asOf)
        lines = Self.lines(row: row, facts: facts)
        action = verdict.action.rawValue
        drift = verdict.drift.map(\.rawValue)
        truthTier = verdict.truth?.tier
        truthStatus = verdict.truth?.status.rawValue
        truthEndDate = date(verdict.truth?.endDate)
        truthProductID = verdict.truth?.productID
        error = verdict.error?.description
        var rules = [Rule(about: "action:\(verdict.action.rawValue)", rule: Self.rule(for: verdict.action, verdict: verdict))]
        for kind in verdict.drift {
            rules.append(Rule(about: "drift:\(kind.rawValue)", rule: Self.rule(for: kind, verdict: verdict)))
        }
        self.rules = rules
    }

    static func date(_ value: Date?) -> String? { value.map(ISO8601.string) }

    static func describe(_ p: PurchaseFact, asOf: Date, lookup: String? = nil, signed: Bool = false, signer: String? = nil) -> Purchase {
        let judged: String =
            switch Decision.judge(p, asOf: asOf) {
            case .known(let j) where j.entitled:
                "entitled (\(j.status.rawValue))" + (j.expiresDate.map { " until \(ISO8601.string($0))" } ?? ", no end")
            case .known(let j): "not entitled (\(j.status.rawValue))"
            case .unknown(let reason): "unknown: \(reason)"
            }
        return Purchase(
            productID: p.productID, store: p.store.rawValue, kind: p.kind.rawValue, sandbox: p.isSandbox,
            purchaseDate: date(p.purchaseDate), expiresDate: date(p.expiresDate),
            gracePeriodExpiresDate: date(p.gracePeriodExpiresDate), refundedAt: date(p.refundedAt),
            storeState: p.storeState?.rawValue, autoRenew: p.autoRenew, originalTransactionID: p.originalTransactionID,
            transactionID: p.storeTransactionID ?? lookup, judged: judged,
            price: p.price.map { "\(NSDecimalNumber(decimal: $0.amount).stringValue) \($0.currency)" },
            signature: signed
                ? "verified: x5c chain to a trusted root, Apple's OIDs, ES256 signature, bundle id, environment"
                    + (signer.map { "; signed by \($0)" } ?? "") : nil)
    }

    /// Each asked source's evidence, judged at `asOf`.
    static func evidence(facts: SourceFacts, asOf: Date) -> [SourceEvidence] {
        var sources: [SourceEvidence] = []
        for origin in facts.asked {
            let errors = facts.errors.filter { $0.origin == origin }
            var purchases: [Purchase]
            var entitlements: [String] = []
            if origin == .revenueCat {
                purchases = facts.revenueCatPurchases.map { describe($0, asOf: asOf) }
                entitlements = facts.revenueCatEntitlements.map { e in
                    let end: String =
                        switch e.expires {
                        case .at(let d): "until \(ISO8601.string(d))"
                        case .never: "never expires"
                        case .unstated: "expiry not stated"
                        }
                    return "\(e.identifier): \(e.productID ?? "(no product named)") \(end)"
                }
            } else if origin == .appStoreReceipt {
                // The receipt's own facts stand in for Apple's when the App Store Server API is not configured.
                purchases =
                    facts.asked.contains(.appStore)
                    ? [] : facts.stores.filter { $0.purchase.store.isApple }.map { describe($0.purchase, asOf: asOf, lookup: $0.lookupID) }
            } else {
                purchases = facts.stores.filter { $0.purchase.origin == origin }.map {
                    describe($0.purchase, asOf: asOf, lookup: $0.lookupID, signed: origin == .appStore, signer: $0.signedBy)
                }
            }
            let unknown = facts.unknownTo.contains(origin) || (origin == .revenueCat && !facts.revenueCatKnowsSubscriber)
            let outcome = !errors.isEmpty ? "error" : (unknown && purchases.isEmpty ? "unknown" : "answered")
            sources.append(
                SourceEvidence(
                    source: origin.rawValue, outcome: outcome, purchases: purchases, entitlements: entitlements,
                    errors: errors.map { "\($0.kind.rawValue): \($0.message)" }))
        }
        return sources
    }

    static func rule(for action: Action, verdict: Verdict) -> String {
        let before = verdict.row.currentTier
        let after = verdict.truth.map { String($0.tier) } ?? "?"
        switch action {
        case .downgrade:
            return "\(Cite.decision): the highest tier entitled at T is \(after), below the row's \(before): the tier is lowered"
        case .upgrade: return "\(Cite.decision): the highest tier entitled at T is \(after), above the row's \(before): the tier is raised"
        case .restore: return "\(Cite.decision): the row holds no tier but a purchase entitles tier \(after) at T: the tier is granted back"
        case .extend: return "\(Cite.decision): the same tier, with a later end date stated by the granting purchase"
        case .statusChange: return "\(Cite.decision): the same tier; status, dates, product or source differ from the truth"
        case .none: return "the row already says what the truth at T says: nothing to change"
        case .skipped:
            return "\(Cite.decision) safety rules: the evidence cannot decide this user (see the drift kinds); the row is left as it was"
        }
    }

    static func rule(for drift: Drift, verdict: Verdict) -> String {
        switch drift {
        case .missedExpiration: "\(Cite.reports): the database says a tier; the paid period is over, no grace"
        case .missedRenewal: "\(Cite.reports): the truth states a later end date, or a tier again"
        case .billingIssueEntered: "\(Cite.decision): a billing issue is detected (still entitled while in grace)"
        case .billingIssueRecovered: "\(Cite.reports): the row says billing_issue; the store says paid again"
        case .graceExpired: "\(Cite.reports): the row says billing_issue; the grace period is over, not entitled"
        case .missedRefund: "\(Cite.decision): refunded or revoked at or before T: not entitled (refunded)"
        case .productChange: "\(Cite.reports): a different product grants the tier now"
        case .sourceConflict:
            "\(Cite.decision): RevenueCat and the purchase's own store disagree; the store is the authority for its own purchases"
        case .staleIdentifier:
            "\(Cite.whose): the row named an older purchase of the line that entitles now; the newer identifier is written"
        case .linkedPurchase:
            "\(Cite.whose): a purchase the row did not name, whose store names this user's account, is linked and written"
        case .ownershipConflict:
            "\(Cite.whose): a store names another buyer, or linking would overwrite a different identifier: the row is left "
                + "untouched" + (verdict.error.map { " (\($0.description))" } ?? "")
        case .sandboxIgnored: "\(Cite.decision): a production run never lets a sandbox purchase entitle"
        case .unknownProduct: "\(Cite.decision): an entitled product is missing from product_tiers: the row is left untouched"
        case .unknownAtSource: "\(Cite.decision): absence is not evidence: no source asked knows this user; the row is left untouched"
        case .fetchError:
            "\(Cite.decision): a fetch or decode error, or evidence the rules cannot read: the row is left untouched"
                + (verdict.error.map { " (\($0.description))" } ?? "")
        case .rowError:
            "\(Cite.hostile): the user's row could not be read: the row is left untouched"
                + (verdict.error.map { " (\($0.description))" } ?? "")
        case .verificationFailed: "\(Cite.decision): a signed payload failed verification: never a fact; the row is left untouched"
        case .concurrentUpdate: "\(Cite.applying): a webhook wrote the row between read and write; it wins"
        case .writeRefused: "the database refused the job's write (row-level security or a missing privilege): not written"
        case .inSync: "the row agrees with the truth at T"
        }
    }
}

extension Explanation {
    /// The explanation as one JSON document (`--json`): keys sorted, so the output is stable.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The explanation as lines for a terminal.
    public var text: [String] {
        var out: [String] = []
        out.append("user \(row.id) at \(asOf) (\(environment) run)")
        out.append(
            "  row: tier \(row.tier), \(row.status), ends \(row.endDate ?? "-"), grace \(row.graceEndsAt ?? "-"), "
                + "source \(row.source ?? "-"), product \(row.productID ?? "-"), apple \(row.originalTransactionID ?? "-")"
                + row.identifiers.map { identifier in
                    let column = identifier.column
                    return ", \(column.label) \(identifier.value.map { column.showsValue ? $0 : "(token set)" } ?? "-")"
                }.joined())
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
                if let price = p.price { facts.append("price \(price)") }
                out.append("    \(p.productID): \(facts.joined(separator: ", "))")
                out.append("      → \(p.judged)")
                if let signature = p.signature { out.append("      signature \(signature)") }
            }
        }
        if !lines.isEmpty {
            out.append("  purchase lines:")
            out += lineTexts
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

/// The CONTRACT sections `explain` names as the rule behind an action or a drift kind.
private enum Cite {
    static let decision = "CONTRACT 'Sources and the decision'"
    static let reports = "CONTRACT 'Reports'"
    static let whose = "CONTRACT 'Whose purchase it is'"
    static let hostile = "CONTRACT 'Hostile answers and bounded work'"
    static let applying = "CONTRACT 'Applying'"
}
