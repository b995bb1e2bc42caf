import Foundation
import SubreconCore

/// `--users-file`: one user id a line; blank lines and `#` comments skipped.
public enum UsersFile {
    public static func read(path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure(.usage, "--users-file: cannot read \(path)")
        }
        var seen = Set<String>()
        var ids: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let id = line.trimmingCharacters(in: .whitespaces)
            if id.isEmpty || id.hasPrefix("#") { continue }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}

/// `subrecon products import FILE`: CSV `product_id,tier[,entitlement]` (header optional) or a JSON array.
public enum ProductFile {
    public static func parse(path: String) throws -> [ProductCatalog.Entry] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure(.usage, "cannot read product file \(path)")
        }
        return try parse(data: data, name: path)
    }

    public static func parse(data: Data, name: String) throws -> [ProductCatalog.Entry] {
        struct JSONEntry: Decodable {
            var product_id: String
            var tier: Int
            var entitlement: String?
        }
        let trimmed = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("[") {
            do {
                return try JSONDecoder().decode([JSONEntry].self, from: data).map {
                    ProductCatalog.Entry(productID: $0.product_id, tier: $0.tier, entitlement: $0.entitlement)
                }
            } catch {
                throw CommandFailure(.usage, "\(name): not a JSON array of {product_id, tier, entitlement}: \(error)")
            }
        }
        var entries: [ProductCatalog.Entry] = []
        for (number, line) in trimmed.split(whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            if number == 0 && fields.first == "product_id" { continue }
            guard fields.count >= 2, !fields[0].isEmpty, let tier = Int(fields[1]), tier >= 0 else {
                throw CommandFailure(.usage, "\(name):\(number + 1): expected product_id,tier[,entitlement]")
            }
            entries.append(
                ProductCatalog.Entry(
                    productID: fields[0], tier: tier, entitlement: fields.count > 2 && !fields[2].isEmpty ? fields[2] : nil))
        }
        return entries
    }
}
