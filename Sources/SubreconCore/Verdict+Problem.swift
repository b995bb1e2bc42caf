import Foundation

extension Verdict {
    /// Why a user was left untouched with an error, as a value: its kind and its data (CONTRACT "Reports" `error`).
    /// Text is made only where it is printed (`description`); a reader takes the data (`missingProducts`), never the
    /// sentence.
    public enum Problem: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Sources answered with errors (each its origin and what it said).
        case sourceErrors([SourceNote])
        /// No source asked stated any purchase (`asked`: the sources asked; `unknownTo`: those that did not know the
        /// user's identifier); with `lineTier`, the absence rule per line: nothing authoritative stated the end of the
        /// line that granted that tier.
        case unknownAtSource(asked: [FactOrigin], unknownTo: [FactOrigin], lineTier: Int?)
        /// RevenueCat states an entitlement that may be active but names no product.
        case unnamedEntitlement(String)
        /// Entitled products `product_tiers` does not map, as the sources named them, sorted.
        case missingProducts([String])
        /// A purchase whose stated facts cannot decide it, and could grant more than the truth would leave.
        case undecidable(origin: FactOrigin, productID: String, reason: String)
        /// The sources bind a purchase this row names to another buyer, or a link would overwrite the row's own
        /// identifier: each reason.
        case ownership([String])
        /// Lines this row names that another user owns tonight (a transfer or a restore on another account).
        case ownedElsewhere([LineTransfer])
        /// The row could not be read (what the reader said, when it said something).
        case unreadableRow(String?)
        /// A verdict written by an earlier version, which kept the error as text only.
        case earlierText(String)

        /// What one source said when it failed for the user.
        public struct SourceNote: Sendable, Hashable, Codable {
            public var origin: FactOrigin
            public var message: String

            public init(origin: FactOrigin, message: String) {
                self.origin = origin
                self.message = message
            }
        }

        /// The operator's sentence.
        public var description: String {
            let untouched = "; row left as it was"
            switch self {
            case .sourceErrors(let notes): return notes.map { "\($0.origin.rawValue): \($0.message)" }.joined(separator: "; ")
            case .unknownAtSource(let asked, let unknownTo, let lineTier):
                let line = lineTier.map { "; no source authoritative for the line that granted tier \($0) stated its end" } ?? ""
                return Self.unknownText(asked: asked, unknownTo: unknownTo) + line + untouched
            case .unnamedEntitlement(let identifier):
                return "revenuecat: entitlement '\(identifier)' may be active but names no product_identifier" + untouched
            case .missingProducts(let products):
                return "entitled product(s) missing from product_tiers: \(products.joined(separator: ", "))"
            case .undecidable(let origin, let productID, let reason): return "\(origin.rawValue): \(productID): \(reason)" + untouched
            case .ownership(let reasons): return reasons.joined(separator: "; ") + untouched
            case .ownedElsewhere(let lines):
                let text = lines.map { "revenuecat lists purchase \($0.identifier) (\($0.origin.rawValue)) under user \($0.owner)" }
                return text.joined(separator: "; ") + ": the line is theirs (a transfer or a restore on another account)" + untouched
            case .unreadableRow(let reason): return (reason ?? "the row could not be read") + untouched
            case .earlierText(let text): return text
            }
        }

        /// The entitled products `product_tiers` does not map; nil for every other problem.
        public var missingProducts: [String]? {
            if case .missingProducts(let products) = self { return products }
            return nil
        }

        /// What "unknown at source" means for a user: which sources were asked and did not know it.
        static func unknownText(asked: [FactOrigin], unknownTo: [FactOrigin]) -> String {
            if asked.isEmpty {
                return "no configured source has an identifier for this user (an Apple original transaction id or stored "
                    + "receipt, or a store's identifier column)"
            }
            var parts: [String] = []
            if asked.contains(.revenueCat) { parts.append("subscriber unknown to RevenueCat (new or empty)") }
            parts += unknownTo.compactMap(\.absenceText)
            if parts.isEmpty { parts.append("no source asked stated any purchase") }
            return parts.joined(separator: "; ")
        }

        // A ledger row an earlier version wrote holds the error as a string: it reads back as `earlierText`.
        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                self = .earlierText(text)
                return
            }
            self = try Stored(from: decoder).problem
        }

        public func encode(to encoder: any Encoder) throws { try Stored(self).encode(to: encoder) }

        /// The stored form: a kind and its fields.
        private struct Stored: Codable {
            var kind: String
            var sources: [SourceNote]?
            var asked: [FactOrigin]?
            var unknownTo: [FactOrigin]?
            var lineTier: Int?
            var identifier: String?
            var products: [String]?
            var origin: FactOrigin?
            var productID: String?
            var reasons: [String]?
            var text: String?
            var lines: [LineTransfer]?

            init(_ problem: Problem) {
                switch problem {
                case .sourceErrors(let notes): self.init(kind: "source_errors", sources: notes)
                case .unknownAtSource(let asked, let unknownTo, let lineTier):
                    self.init(kind: "unknown_at_source", asked: asked, unknownTo: unknownTo, lineTier: lineTier)
                case .unnamedEntitlement(let identifier): self.init(kind: "unnamed_entitlement", identifier: identifier)
                case .missingProducts(let products): self.init(kind: "missing_products", products: products)
                case .undecidable(let origin, let productID, let reason):
                    self.init(kind: "undecidable", origin: origin, productID: productID, reasons: [reason])
                case .ownership(let reasons): self.init(kind: "ownership", reasons: reasons)
                case .ownedElsewhere(let lines): self.init(kind: "owned_elsewhere", lines: lines)
                case .unreadableRow(let reason): self.init(kind: "unreadable_row", text: reason)
                case .earlierText(let text): self.init(kind: "text", text: text)
                }
            }

            init(
                kind: String, sources: [SourceNote]? = nil, asked: [FactOrigin]? = nil, unknownTo: [FactOrigin]? = nil,
                lineTier: Int? = nil, identifier: String? = nil, products: [String]? = nil, origin: FactOrigin? = nil,
                productID: String? = nil, reasons: [String]? = nil, text: String? = nil, lines: [LineTransfer]? = nil
            ) {
                (self.kind, self.sources, self.asked, self.unknownTo, self.lineTier) = (kind, sources, asked, unknownTo, lineTier)
                (self.identifier, self.products, self.origin, self.productID) = (identifier, products, origin, productID)
                (self.reasons, self.text, self.lines) = (reasons, text, lines)
            }

            var problem: Problem {
                get throws {
                    switch kind {
                    case "source_errors": return .sourceErrors(sources ?? [])
                    case "unknown_at_source": return .unknownAtSource(asked: asked ?? [], unknownTo: unknownTo ?? [], lineTier: lineTier)
                    case "unnamed_entitlement": return .unnamedEntitlement(identifier ?? "")
                    case "missing_products": return .missingProducts(products ?? [])
                    case "undecidable":
                        guard let origin, let productID else { break }
                        return .undecidable(origin: origin, productID: productID, reason: reasons?.first ?? "")
                    case "ownership": return .ownership(reasons ?? [])
                    case "owned_elsewhere": return .ownedElsewhere(lines ?? [])
                    case "unreadable_row": return .unreadableRow(text)
                    case "text": return .earlierText(text ?? "")
                    default: break
                    }
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown verdict problem \(kind)"))
                }
            }
        }
    }
}
