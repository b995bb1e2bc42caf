import SubreconDatabase
import SubreconJob
import SubreconPorts

// The composition root (docs/ARCHITECTURE.md, "Ports"): each port the job and the store adapters need is given its
// PostgreSQL adapter by name, all over one database's shared session pool.

extension JobPorts {
    /// Every job port served by its PostgreSQL adapter.
    public init(postgres database: SubscriptionDatabase) {
        self.init(
            candidates: database.candidates, catalog: database.catalog, journal: database.runs, verdicts: database.verdicts,
            history: database.history, feeds: database.feeds)
        refunds = database.refunds
        links = database.links
        reports = database.reports
    }
}

extension AdapterReads {
    /// Every store adapter read served by its PostgreSQL adapter.
    public init(postgres database: SubscriptionDatabase) {
        self.init(receipts: database.receipts, refundsSeen: database.refunds, knownCustomers: database.knownCustomers)
    }
}
