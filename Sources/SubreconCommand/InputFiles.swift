import Foundation
import SubreconCore
import SubreconJob

/// Text an operator hands the job (docs/CONTRACT.md, "Commands"), read as strictly as a store's answer: UTF-8
/// (a leading byte order mark ignored, anything invalid refused naming its line), and no control characters in a
/// value (`control(in:)`, the job's rule, which `StoredCatalog` also applies to the stored rows). Every refusal is one
/// usage line (64) naming the file and the line; nothing is written.
extension OperatorText {
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The file's text without a leading BOM; invalid UTF-8 is refused naming the first line holding it.
    static func decode(_ data: Data, name: String) throws -> String {
        var bytes = Array(data)
        if bytes.starts(with: byteOrderMark) { bytes.removeFirst(byteOrderMark.count) }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var line = 1
        for piece in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if String(validating: piece, as: UTF8.self) == nil { break }
            line += 1
        }
        throw refusal(name, line, "not UTF-8 text (an invalid byte sequence); save the file as UTF-8")
    }

    static func refusal(_ file: String, _ line: Int, _ problem: String) -> CommandFailure {
        CommandFailure(.usage, "\(file):\(line): \(problem); nothing imported")
    }
}

/// `--users-file`: one user id a line (LF or CRLF); blank lines and `#` comments skipped, blanks around an id dropped. UTF-8 (a
/// leading BOM ignored); an id holding a control character (a NUL no database text can hold, an escape sequence) is
/// a usage error naming its line, before anything is touched.
public enum UsersFile {
    public static func read(path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure(.usage, "--users-file: cannot read \(path)")
        }
        let text: String
        do {
            text = try OperatorText.decode(data, name: path)
        } catch let failure as CommandFailure {
            throw CommandFailure(.usage, "--users-file " + failure.description.replacingOccurrences(of: "; nothing imported", with: ""))
        }
        var seen = Set<String>()
        var ids: [String] = []
        // Lines end in LF or CRLF (a file from Windows, as `products import` takes it); Swift's `Character` holds a
        // CRLF as one, so both are named. A CR anywhere else is a control character, refused.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let id = line.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r"))
            if id.isEmpty || id.hasPrefix("#") { continue }
            if let scalar = OperatorText.control(in: id) {
                throw CommandFailure(
                    .usage, "--users-file \(path):\(index + 1): a user id holds the control character \(OperatorText.name(scalar))")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}

/// `subrecon products import FILE` (docs/CONTRACT.md, "Commands"): all or nothing. A JSON array of
/// `{"product_id", "tier", "entitlement"}` (a file whose first character is `[`), else CSV as RFC 4180
/// (`product_id,tier[,entitlement]`, quoted fields, an optional header). A tier is an integer 0…1000
/// (`StoredCatalog.maximumTier`); a product id is non-empty, without control characters (or blanks around it, unless
/// quoted); a product listed twice is refused. `csv(_:)` is what `products list` prints, and reads back to the same
/// entries.
public enum ProductFile {
    static let header = ["product_id", "tier", "entitlement"]

    public static func parse(path: String) throws -> [ProductCatalog.Entry] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure(.usage, "cannot read product file \(path)")
        }
        return try parse(data: data, name: path)
    }

    public static func parse(data: Data, name: String) throws -> [ProductCatalog.Entry] {
        let text = try OperatorText.decode(data, name: name)
        let lines: [(line: Int, entry: ProductCatalog.Entry)]
        if text.drop(while: { $0.isWhitespace }).first == "[" {
            lines = try ProductJSON.entries(text, name: name)
        } else {
            lines = try csvEntries(text, name: name)
        }
        var firstLine: [String: Int] = [:]
        for (line, entry) in lines {
            if let first = firstLine[entry.productID] {
                throw OperatorText.refusal(name, line, "product \(visible(entry.productID)) is listed twice (first on line \(first))")
            }
            firstLine[entry.productID] = line
        }
        return lines.map(\.entry)
    }

    /// The mapping as `products list` prints it: RFC 4180 (CRLF, a header, fields quoted when they hold a comma, a
    /// quote, a line break or blanks at either end), in product order; a null entitlement is an empty field, an
    /// empty one `""`.
    public static func csv(_ catalog: ProductCatalog) -> String {
        var text = header.joined(separator: ",") + "\r\n"
        for entry in catalog.entries.values.sorted(by: { $0.productID < $1.productID }) {
            let entitlement = entry.entitlement.map { $0.isEmpty ? "\"\"" : field($0) } ?? ""
            text += "\(field(entry.productID)),\(entry.tier),\(entitlement)\r\n"
        }
        return text
    }

    static func field(_ value: String) -> String {
        let blankEnds = value.first.map(\.isWhitespace) == true || value.last.map(\.isWhitespace) == true
        guard blankEnds || value.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A value for a message: quoted, its control characters named.
    static func visible(_ value: String) -> String { value.debugDescription }

    static func csvEntries(_ text: String, name: String) throws -> [(line: Int, entry: ProductCatalog.Entry)] {
        var records = try RFC4180.records(text, name: name)
        if let first = records.first, first.fields.first?.text == "product_id" {
            let names = first.fields.map(\.text)
            guard names == Array(header.prefix(2)) || names == header else {
                throw OperatorText.refusal(name, first.line, "the header must be product_id,tier[,entitlement]")
            }
            records.removeFirst()
        }
        return try records.map { record in
            guard (2...3).contains(record.fields.count) else {
                throw OperatorText.refusal(
                    name, record.line, "expected product_id,tier[,entitlement], found \(record.fields.count) field(s)")
            }
            let entry = try checkedEntry(
                productID: record.fields[0].text, tier: record.fields[1].text.trimmingCharacters(in: .whitespaces),
                entitlement: record.fields.count == 3 ? record.fields[2].text : nil, name: name, line: record.line)
            for field in [record.fields[0]] + record.fields.dropFirst(2) where !field.quoted {
                if field.text.first.map(\.isWhitespace) == true || field.text.last.map(\.isWhitespace) == true {
                    throw OperatorText.refusal(
                        name, record.line, "\(visible(field.text)) has blanks around it; quote the field if they belong to it")
                }
            }
            let unquotedEmpty = record.fields.count == 3 && !record.fields[2].quoted && record.fields[2].text.isEmpty
            return (record.line, unquotedEmpty ? ProductCatalog.Entry(productID: entry.productID, tier: entry.tier) : entry)
        }
    }

    /// One entry, checked as every file's are; `tier` is the text of the number.
    static func checkedEntry(productID: String, tier: String, entitlement: String?, name: String, line: Int) throws
        -> ProductCatalog.Entry
    {
        guard !productID.isEmpty else { throw OperatorText.refusal(name, line, "the product id is empty") }
        if let scalar = OperatorText.control(in: productID) {
            throw OperatorText.refusal(
                name, line, "product id \(visible(productID)) holds the control character \(OperatorText.name(scalar))")
        }
        if let entitlement, let scalar = OperatorText.control(in: entitlement) {
            throw OperatorText.refusal(
                name, line, "entitlement \(visible(entitlement)) holds the control character \(OperatorText.name(scalar))")
        }
        guard !tier.isEmpty, tier.count <= 4, tier.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }),
            let value = Int(tier), value <= StoredCatalog.maximumTier
        else {
            throw OperatorText.refusal(name, line, "tier \(visible(tier)) is not an integer 0…\(StoredCatalog.maximumTier)")
        }
        return ProductCatalog.Entry(productID: productID, tier: value, entitlement: entitlement)
    }
}

/// RFC 4180 records: fields separated by commas, records by CRLF (or LF); a field in double quotes may hold commas,
/// line breaks and doubled quotes. A quote inside an unquoted field, text after a closing quote or a quoted field
/// never closed is refused naming its line. Empty lines are skipped.
enum RFC4180 {
    struct Field: Equatable {
        var text = ""
        var quoted = false
    }

    struct Record {
        /// The line the record starts on (1-based).
        var line: Int
        var fields: [Field]
    }

    static func records(_ text: String, name: String) throws -> [Record] {
        var reader = Reader(scalars: Array(text.unicodeScalars), name: name)
        var records: [Record] = []
        while let record = try reader.record() {
            if record.fields != [Field()] { records.append(record) }
        }
        return records
    }

    struct Reader {
        let scalars: [Unicode.Scalar]
        let name: String
        var index = 0
        var line = 1

        mutating func record() throws -> Record? {
            guard index < scalars.count else { return nil }
            let start = line
            var fields: [Field] = []
            while true {
                let field = try self.field(recordLine: start)
                fields.append(field)
                guard index < scalars.count else { return Record(line: start, fields: fields) }
                let separator = scalars[index]
                index += 1
                if separator == "," { continue }
                if separator == "\r", index < scalars.count, scalars[index] == "\n" { index += 1 }
                line += 1
                return Record(line: start, fields: fields)
            }
        }

        /// One field, up to (not past) the comma or line break ending it.
        mutating func field(recordLine: Int) throws -> Field {
            guard index < scalars.count, scalars[index] == "\"" else { return try unquoted() }
            index += 1
            var text = String.UnicodeScalarView()
            while true {
                guard index < scalars.count else {
                    throw OperatorText.refusal(name, recordLine, "a quoted field is never closed")
                }
                let scalar = scalars[index]
                index += 1
                if scalar == "\"" {
                    if index < scalars.count, scalars[index] == "\"" {
                        text.append("\"")
                        index += 1
                        continue
                    }
                    guard index == scalars.count || isEnd(scalars[index]) else {
                        throw OperatorText.refusal(name, line, "text after a closing quote (a quote inside a field is doubled: \"\")")
                    }
                    return Field(text: String(text), quoted: true)
                }
                if scalar == "\n" { line += 1 }
                text.append(scalar)
            }
        }

        mutating func unquoted() throws -> Field {
            var text = String.UnicodeScalarView()
            while index < scalars.count, !isEnd(scalars[index]) {
                if scalars[index] == "\"" {
                    throw OperatorText.refusal(
                        name, line, "a quote inside an unquoted field (quote the whole field and double the quote)")
                }
                text.append(scalars[index])
                index += 1
            }
            return Field(text: String(text), quoted: false)
        }

        /// A comma, or a line break (LF, or CR followed by LF) ending the field.
        func isEnd(_ scalar: Unicode.Scalar) -> Bool {
            if scalar == "," || scalar == "\n" { return true }
            return scalar == "\r" && index + 1 < scalars.count && scalars[index + 1] == "\n"
        }
    }
}

/// The JSON form of a product file: an array of objects with exactly the keys `product_id` (text), `tier` (an
/// integer) and, optionally, `entitlement` (text or null); each entry checked as a CSV line is, naming its line.
enum ProductJSON {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// One element as written: what it holds, or what is wrong with it.
    struct Element: Decodable {
        var productID: String?
        var tier: Int?
        var entitlement: String?
        var problem: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            let known: Set<String> = ["product_id", "tier", "entitlement"]
            if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
                problem = "unknown key \(unknown.debugDescription) (expected product_id, tier, entitlement)"
                return
            }
            productID = try? container.decode(String.self, forKey: Key(stringValue: "product_id"))
            tier = try? container.decode(Int.self, forKey: Key(stringValue: "tier"))
            let entitlementKey = Key(stringValue: "entitlement")
            if container.contains(entitlementKey), (try? container.decodeNil(forKey: entitlementKey)) != true {
                entitlement = try? container.decode(String.self, forKey: entitlementKey)
                if entitlement == nil { problem = "entitlement is not text or null" }
            }
            if productID == nil { problem = "product_id is missing or not text" }
            if tier == nil { problem = "tier is missing or not an integer 0…\(StoredCatalog.maximumTier)" }
        }
    }

    static func entries(_ text: String, name: String) throws -> [(line: Int, entry: ProductCatalog.Entry)] {
        let lines = elementLines(text)
        let elements: [Element]
        do {
            elements = try JSONDecoder().decode([Element].self, from: Data(text.utf8))
        } catch let DecodingError.typeMismatch(_, context) {
            let index = context.codingPath.first?.intValue
            let line = index.flatMap { $0 < lines.count ? lines[$0] : nil } ?? 1
            throw OperatorText.refusal(name, line, "expected a JSON array of {product_id, tier, entitlement} objects")
        } catch {
            throw OperatorText.refusal(name, 1, "not a JSON array of {product_id, tier, entitlement} objects")
        }
        return try elements.enumerated().map { index, element in
            let line = index < lines.count ? lines[index] : 1
            if let problem = element.problem { throw OperatorText.refusal(name, line, problem) }
            let entry = try ProductFile.checkedEntry(
                productID: element.productID ?? "", tier: String(element.tier ?? -1), entitlement: element.entitlement,
                name: name, line: line)
            return (line, entry)
        }
    }

    /// The line each element of the top-level array starts on.
    static func elementLines(_ text: String) -> [Int] {
        var lines: [Int] = []
        var (line, depth, inString, escaped, expecting) = (1, 0, false, false, false)
        for scalar in text.unicodeScalars {
            if scalar == "\n" { line += 1 }
            if inString {
                if escaped { escaped = false } else if scalar == "\\" { escaped = true } else if scalar == "\"" { inString = false }
                continue
            }
            if depth == 1, expecting, !" \t\r\n,]".unicodeScalars.contains(scalar) {
                lines.append(line)
                expecting = false
            }
            switch scalar {
            case "\"": inString = true
            case "[", "{":
                depth += 1
                if depth == 1 { expecting = true }
            case "]", "}": depth -= 1
            case "," where depth == 1: expecting = true
            default: break
            }
        }
        return lines
    }
}
