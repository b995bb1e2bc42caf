import Foundation

/// A strict reader of the Prometheus text exposition format (0.0.4), enough to check what we write:
/// metric and label names, `# HELP`/`# TYPE` lines before their samples, one TYPE per family, families not
/// interleaved, label value escapes (`\\`, `\"`, `\n`) and numeric values.
public struct PrometheusTextParser: Sendable {
    /// One sample line: metric name, labels, value.
    public struct Sample: Hashable, Sendable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    /// Why the text is not a valid exposition, with the line number.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Every sample, in order.
    public private(set) var samples: [Sample] = []
    /// The `# TYPE` of each family.
    public private(set) var types: [String: String] = [:]

    /// Parses `text`, throwing `Failure` at the first violation.
    public init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw Failure(description: "the exposition must end with a line feed") }
        var current: String?
        var finished = Set<String>()
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let line = String(line)
            func fail(_ why: String) -> Failure { Failure(description: "line \(number + 1): \(why): \(line)") }
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 3, Self.isMetricName(parts[2]) else { throw fail("bad metric name") }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                        throw fail("bad type")
                    }
                    guard types[parts[2]] == nil else { throw fail("second TYPE") }
                    types[parts[2]] = parts[3]
                }
                if current != parts[2] {
                    if let current { finished.insert(current) }
                    guard !finished.contains(parts[2]) else { throw fail("family interleaved") }
                    current = parts[2]
                }
                continue
            }
            if line.hasPrefix("#") || line.isEmpty { continue }
            let sample = try Self.sample(line, fail: fail)
            guard sample.name == current, types[sample.name] != nil else { throw fail("sample without its TYPE line") }
            samples.append(sample)
        }
    }

    /// The value of the first sample of `name` whose labels include `labels`.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value
    }

    static func isMetricName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first == "_" || first == ":" || (first.isASCII && first.properties.isAlphabetic) else {
            return false
        }
        return s.unicodeScalars.allSatisfy {
            $0 == "_" || $0 == ":" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }

    static func isLabelName(_ s: String) -> Bool { isMetricName(s) && !s.contains(":") }

    private static func sample(_ line: String, fail: (String) -> Failure) throws -> Sample {
        var chars = Array(line)
        var i = 0
        var name = ""
        while i < chars.count, chars[i] != "{", chars[i] != " " {
            name.append(chars[i])
            i += 1
        }
        guard isMetricName(name) else { throw fail("bad metric name") }
        var labels: [String: String] = [:]
        if i < chars.count, chars[i] == "{" {
            i += 1
            while i < chars.count, chars[i] != "}" {
                var key = ""
                while i < chars.count, chars[i] != "=" {
                    key.append(chars[i])
                    i += 1
                }
                guard isLabelName(key), i + 1 < chars.count, chars[i + 1] == "\"" else { throw fail("bad label name") }
                i += 2
                var value = ""
                while i < chars.count, chars[i] != "\"" {
                    if chars[i] == "\\" {
                        guard i + 1 < chars.count else { throw fail("dangling escape") }
                        switch chars[i + 1] {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("bad escape")
                        }
                        i += 2
                    } else {
                        value.append(chars[i])
                        i += 1
                    }
                }
                guard i < chars.count else { throw fail("unterminated label value") }
                i += 1
                guard labels.updateValue(value, forKey: key) == nil else { throw fail("repeated label") }
                if i < chars.count, chars[i] == "," { i += 1 }
            }
            guard i < chars.count else { throw fail("unterminated labels") }
            i += 1
        }
        guard i < chars.count, chars[i] == " " else { throw fail("no value") }
        chars = Array(chars[(i + 1)...])
        let fields = String(chars).split(separator: " ")
        guard (1...2).contains(fields.count), let value = Double(fields[0]) ?? (fields[0] == "+Inf" ? .infinity : nil) else {
            throw fail("bad value")
        }
        return Sample(name: name, labels: labels, value: value)
    }
}
