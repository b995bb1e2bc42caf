import Foundation
import SubreconCore

// The field readers of every Stripe object: optional and lenient about type (a missing, null or mistyped field is
// nil, never a default), strict about instants (`stripeTimestamp`: absent, a date, or unusable). Foundation and
// SubreconCore only: `scripts/fuzz` compiles it into the fuzz target.

private struct IDOnly: Decodable {
    var id: String?
    enum CodingKeys: String, CodingKey { case id }
    init(from decoder: any Decoder) throws {
        id = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .id)
    }
}

/// The keys of a list object Stripe embeds in another (`items`, `refunds`, `line_items`).
private enum EmbeddedListKeys: String, CodingKey {
    case data
    case hasMore = "has_more"
}

extension KeyedDecodingContainer {
    /// The `data` (nil when missing or not a list of `Element`) and `has_more` of a list object embedded under `key`;
    /// nil when `key` holds no object.
    func embeddedList<Element: Decodable>(_ key: Key, of element: Element.Type) -> (data: [Element]?, hasMore: Bool?)? {
        guard let list = try? nestedContainer(keyedBy: EmbeddedListKeys.self, forKey: key) else { return nil }
        return ((try? list.decode([Element].self, forKey: .data)), list.lenientBool(.hasMore))
    }

    /// A string; nil when missing, null or of another type.
    func lenientString(_ key: Key) -> String? {
        (try? decodeIfPresent(String.self, forKey: key)) ?? nil
    }

    /// A boolean; nil when missing, null or of another type (`"true"` is not a boolean).
    func lenientBool(_ key: Key) -> Bool? {
        (try? decodeIfPresent(Bool.self, forKey: key)) ?? nil
    }

    /// An id given as a string or as an expanded object's `id`.
    func lenientID(_ key: Key) -> String? {
        if let text = lenientString(key) { return text }
        return ((try? decodeIfPresent(IDOnly.self, forKey: key)) ?? nil)?.id
    }

    /// A whole number in `Int64`, given as a JSON number or a string of digits; nil for anything else
    /// (fractions, `1e300`, numbers beyond `Int64`).
    func lenientInteger(_ key: Key) -> Int64? {
        if let value = (try? decodeIfPresent(Int64.self, forKey: key)) ?? nil { return value }
        if let value = (try? decodeIfPresent(Double.self, forKey: key)) ?? nil {
            guard value.rounded(.towardZero) == value, let whole = SourceNumber.int64(value),
                abs(value) < 9_007_199_254_740_992
            else { return nil }
            return whole
        }
        if let text = (try? decodeIfPresent(String.self, forKey: key)) ?? nil {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.utf8.count <= 19,
                trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            return Int64(trimmed)
        }
        return nil
    }

    /// A Unix timestamp in whole seconds (a JSON number, or a string of digits) in 1970...2200 (`StrictDate`):
    /// absent when missing or null, unusable when present but anything else (a fraction, out of range, a word).
    func stripeTimestamp(_ key: Key) -> StripeTimestamp {
        guard contains(key), (try? decodeNil(forKey: key)) != true else { return .absent }
        let date: Date?
        if let value = (try? decode(Double.self, forKey: key)) {
            date = StrictDate.epochSeconds(value)
        } else if let text = (try? decode(String.self, forKey: key)), !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let whole = Int64(text)
        {
            date = StrictDate.epochSeconds(whole)
        } else {
            date = nil
        }
        return date.map(StripeTimestamp.at) ?? .unusable
    }

    /// The instant of `key`, nil when absent or unusable; the key's name is added to `unusable` when unusable.
    func timestamp(_ key: Key, unusable: inout [String]) -> Date? {
        switch stripeTimestamp(key) {
        case .absent: return nil
        case .at(let date): return date
        case .unusable:
            unusable.append(key.stringValue)
            return nil
        }
    }
}

/// A Stripe timestamp field as sent: absent (missing or null), an instant, or present but unusable (CONTRACT "Hostile answers and bounded work").
public enum StripeTimestamp: Sendable, Hashable {
    case absent
    case at(Date)
    case unusable

    /// The instant, nil when absent or unusable.
    public var date: Date? {
        if case .at(let date) = self { return date }
        return nil
    }
}
