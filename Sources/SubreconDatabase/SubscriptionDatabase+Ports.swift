import SubreconPorts

// PostgreSQL serves every database port of the job and of the store adapters (docs/ARCHITECTURE.md, "Ports").
extension SubscriptionDatabase: CandidateSource, CatalogSource, RunJournal, VerdictRecords, RunHistory, FeedCandidates, PurchaseLinks,
    RefundRecords, RunReportRecords, ReceiptLookup, RefundsSeenLookup
{}
