import SubreconPorts

// PostgreSQL serves every database port of the job (docs/ARCHITECTURE.md, "Ports").
extension SubscriptionDatabase: CandidateSource, CatalogSource, RunJournal, VerdictRecords, RunHistory, FeedCandidates, PurchaseLinks,
    RefundRecords, RunReportRecords
{}
