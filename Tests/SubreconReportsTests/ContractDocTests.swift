import Foundation
import SubreconCore
import SubreconTestKit
import Testing

/// `docs/CONTRACT.md` says what the code does: its option tables are `subrecon run --help` and `subrecon doctor --help`,
/// its drift kinds are the `Drift` enum, its exit codes the `ExitStatus` enum. A change on either side without the
/// other fails here.
@Suite("docs/CONTRACT.md matches the code")
struct ContractDocTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("the option table lists every option of `subrecon run --help`, and no other")
    func optionsMatchHelp() throws {
        let documented = try ContractDoc.firstCells(of: "Options of `subrecon run`")
        let help = try ContractDoc.runHelp(packageRoot: Self.packageRoot)
        // ArgumentParser's own flags, on every command (CONTRACT's Commands table lists `subrecon --version`).
        let offered = ContractDoc.options(inHelp: help).subtracting(["--help", "--version"])
        #expect(!offered.isEmpty, "no option found in `subrecon run --help`")
        #expect(offered.subtracting(documented).sorted() == [], "options missing from docs/CONTRACT.md")
        #expect(Set(documented).subtracting(offered).sorted() == [], "documented options `subrecon run` does not have")
        #expect(documented.count == Set(documented).count, "an option is documented twice")
    }

    @Test("the drift kinds listed are exactly the Drift enum's raw values, in its order")
    func driftKindsMatchEnum() throws {
        let documented = try ContractDoc.firstCells(of: "Drift kinds")
        #expect(documented == Drift.allCases.map(\.rawValue))
    }

    @Test("the exit codes listed are exactly the ExitStatus enum's values")
    func exitCodesMatchEnum() throws {
        let documented = try ContractDoc.firstCells(of: "Exit codes")
        #expect(documented == ExitStatus.allCases.map { String($0.rawValue) }.sorted { Int($0)! < Int($1)! })
    }

    @Test("`subrecon doctor`'s section: its option table is `subrecon doctor --help`, its exit codes are ExitStatus values")
    func doctorMatchesHelp() throws {
        let documented = try ContractDoc.firstCells(of: "subrecon doctor")
        let help = try ContractDoc.help(packageRoot: Self.packageRoot, command: "doctor")
        // ArgumentParser's own flags, on every command (CONTRACT's Commands table lists `subrecon --version`).
        let offered = ContractDoc.options(inHelp: help).subtracting(["--help", "--version"])
        #expect(!offered.isEmpty, "no option found in `subrecon doctor --help`")
        #expect(Set(documented) == offered, "docs/CONTRACT.md's doctor options against `subrecon doctor --help`")
        let lines = try ContractDoc.firstCells(of: "subrecon doctor", table: 1)
        #expect(lines.first == "configuration" && lines.contains("database") && lines.contains("revenuecat"))
        let codes = try ContractDoc.firstCells(of: "subrecon doctor", table: 2)
        #expect(codes == ["0", "69", "78"])
        #expect(codes.allSatisfy { code in ExitStatus.allCases.contains { String($0.rawValue) == code } })
        #expect(try ContractDoc.firstCells(of: "Commands").contains("subrecon doctor [--timeout SECONDS]"))
    }

    @Test("the repository stands alone: nothing in it points at a directory outside it")
    func noReferenceOutsideTheRepository() throws {
        let needles = [".." + "/shared", "/work/" + "shared"]
        var offenders: [String] = []
        for top in ["README.md", "BENCHMARKS.md", "Package.swift", "docs", "scripts", "Sources", "Tests", "Fuzz", "cron", ".ci"] {
            for file in ContractDoc.files(under: Self.packageRoot.appendingPathComponent(top)) {
                guard let data = FileManager.default.contents(atPath: file.path) else { continue }
                let text = String(decoding: data, as: UTF8.self)
                if needles.contains(where: text.contains) { offenders.append(file.path) }
            }
        }
        #expect(offenders == [])
    }
}

/// Reading `docs/CONTRACT.md` and the executable's help.
enum ContractDoc {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The first cell of every body row of the first table (or the `table`-th, counted from 0) under the `## heading`
    /// section (backticks removed).
    static func firstCells(of heading: String, table index: Int = 0) throws -> [String] {
        let url = ContractDocTests.packageRoot.appendingPathComponent("docs/CONTRACT.md")
        guard let data = FileManager.default.contents(atPath: url.path) else { throw Missing(description: "\(url.path) missing") }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: Substring("## " + heading)) else {
            throw Missing(description: "docs/CONTRACT.md has no section `## \(heading)`")
        }
        var section = lines[(start + 1)...].prefix { !$0.hasPrefix("## ") }
        for _ in 0..<index { section = section.drop { !$0.hasPrefix("|") }.drop { $0.hasPrefix("|") } }
        let table = section.drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.dropFirst(2)
        return table.map { row in
            let cell = row.dropFirst().split(separator: "|", omittingEmptySubsequences: false).first ?? ""
            return cell.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
        }
    }

    /// `subrecon run --help` from the built executable (`swift build` first).
    static func runHelp(packageRoot: URL) throws -> String { try help(packageRoot: packageRoot, command: "run") }

    /// `subrecon COMMAND --help` from the built executable (`swift build` first).
    static func help(packageRoot: URL, command: String) throws -> String {
        let binary = packageRoot.appendingPathComponent(".build/debug/subrecon").path
        guard let text = try HelpText.of(binary: binary, [command], columns: 200) else {
            throw Missing(description: "\(binary) is missing: run swift build first")
        }
        return text
    }

    /// Option names declared in help text: lines indented by exactly two spaces, `--name` or `-x, --name`.
    static func options(inHelp help: String) -> Set<String> {
        var names: Set<String> = []
        for line in help.split(separator: "\n") where line.hasPrefix("  ") && !line.hasPrefix("   ") {
            let words = line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
            if let name = words.first(where: { $0.hasPrefix("--") }) { names.insert(name) }
        }
        return names
    }

    /// Every regular file below `url` (or `url` itself when it is a file).
    static func files(under url: URL) -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [url] }
        let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        return (walker?.allObjects as? [URL] ?? []).filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }
}
