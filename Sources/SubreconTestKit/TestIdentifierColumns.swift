import SubreconCore

extension IdentifierColumn {
    /// The stores' identifier columns as the registry declares them (`StoreRegistry.identifierColumns`; a test of the
    /// integration target holds the two equal), for tests below the composition root.
    public static let testGoogle = IdentifierColumn(origin: .googlePlay, name: "google_purchase_token", label: "google", showsValue: false)
    public static let testStripe = IdentifierColumn(origin: .stripe, name: "stripe_customer_id", label: "stripe", showsValue: true)
    public static let testColumns = [testGoogle, testStripe]
}
