/// The product → tier mapping of the `product_tiers` table.
public struct ProductCatalog: Sendable, Hashable {
    public struct Entry: Sendable, Hashable, Codable {
        public var productID: String
        public var tier: Int
        public var entitlement: String?
        public init(productID: String, tier: Int, entitlement: String? = nil) {
            self.productID = productID
            self.tier = tier
            self.entitlement = entitlement
        }
    }

    public private(set) var entries: [String: Entry]

    public init(_ entries: [Entry]) {
        self.entries = Dictionary(entries.map { ($0.productID, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The tier of a product: an exact match first; for a Google Play id `subscription:base-plan`
    /// not listed as such, the subscription id before the colon. Nil means unknown.
    public func tier(for productID: String) -> Int? { entry(for: productID)?.tier }

    /// The mapping entry of a product, matched as `tier(for:)` matches.
    public func entry(for productID: String) -> Entry? {
        if let entry = entries[productID] { return entry }
        if let colon = productID.firstIndex(of: ":"), let entry = entries[String(productID[..<colon])] { return entry }
        return nil
    }
}
