extension RunSummary {
    /// A source that answered nothing but 429/5xx/timeouts for a whole minute (CONTRACT "Hostile answers and bounded work"): declared down at `since`,
    /// its remaining users were `fetch_error` without being asked (`sources_down` in `summary.json`).
    public struct SourceDown: Sendable, Codable, Hashable {
        public var source: String
        /// When it was declared down (ISO 8601).
        public var since: String
        public var reason: String

        public init(source: String, since: String, reason: String) {
            self.source = source
            self.since = since
            self.reason = reason
        }
    }
}
