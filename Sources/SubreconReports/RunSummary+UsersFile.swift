import Foundation

extension RunSummary {
    /// How the ids of `--users-file` met `users` (CONTRACT "Commands"): the ids this run's shard takes, how many of them
    /// no row has, and the first few of those as the file gave them (escaped where printed).
    public struct UsersFile: Sendable, Codable, Hashable {
        /// The file's distinct ids within this run's shard.
        public var ids: Int
        /// Of those, the ids no `users` row has.
        public var unmatched: Int
        /// The first `sampleSize` unmatched ids, in file order.
        public var firstUnmatched: [String]

        /// How many unmatched ids are named.
        public static let sampleSize = 5

        public init(ids: Int, unmatched: [String]) {
            self.ids = ids
            self.unmatched = unmatched.count
            self.firstUnmatched = Array(unmatched.prefix(Self.sampleSize))
        }

        /// No id of the file has a row, though the shard took some: a file from another system or the wrong database.
        public var matchesNothing: Bool { ids > 0 && unmatched == ids }

        /// "3 of 10 ids match no row in users: "a", "b", "c"" (the ids quoted as Swift writes a string, so a blank,
        /// a quote or a control character stays visible); nil when every id matched.
        public var unmatchedWords: String? {
            guard unmatched > 0 else { return nil }
            return "\(unmatched) of \(ids) id\(ids == 1 ? "" : "s") match no row in users: \(unmatchedNamed)"
        }

        /// The first unmatched ids, quoted as Swift writes a string, with ", …" when more did not match.
        public var unmatchedNamed: String {
            firstUnmatched.map(\.debugDescription).joined(separator: ", ") + (unmatched > firstUnmatched.count ? ", …" : "")
        }

        enum CodingKeys: String, CodingKey {
            case ids, unmatched
            case firstUnmatched = "first_unmatched"
        }
    }
}
