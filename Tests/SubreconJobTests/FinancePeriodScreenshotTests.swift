import Foundation
import SubreconJob
import SubreconReports
import SubreconTestKit
import Testing

/// The period's HTML in a real headless browser (`scripts/screenshot-summary`, Chromium): it renders to an image of the
/// page's width. Skipped, saying so, where Chromium is not installed (the script exits 0 then).
@Suite("Finance over a period: the HTML in a headless browser")
struct FinancePeriodScreenshotTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var chromium: String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["CHROMIUM"], !path.isEmpty { return path }
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in path {
            for name in ["chromium", "chromium-browser", "google-chrome"] {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }

    @Test("the month's finance HTML renders in headless Chromium", .enabled(if: chromium != nil, "chromium is not installed"))
    func screenshot() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("finance-shot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let range = FinancePeriodRange(from: FinanceMonthFixture.from, to: FinanceMonthFixture.to)
        let result = try await FinanceClose.run(
            source: InMemoryFinanceSource.month, range: range, now: FinanceMonthFixture.now, directory: folder, details: false)
        let html = folder.appendingPathComponent("\(range.stem).html")
        let png = folder.appendingPathComponent("\(range.stem).png")
        let process = Process()
        process.executableURL = Self.packageRoot.appendingPathComponent("scripts/screenshot-summary")
        process.arguments = [html.path, png.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let image = try Data(contentsOf: png)
        #expect(image.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        // The IHDR chunk: width and height, big-endian, at bytes 16–23 (the script's window is 1200 × 1600).
        let width = image[16..<20].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 1200)
        #expect(image.count > 20_000, "a page with tables and charts, not a blank image (\(image.count) bytes)")
        #expect(result.report.nights.count == 30)
        // To look at it: SUBRECON_KEEP_SCREENSHOT=DIR keeps the image (and the page) there.
        if let keep = ProcessInfo.processInfo.environment["SUBRECON_KEEP_SCREENSHOT"], !keep.isEmpty {
            for file in [png, html] {
                let target = URL(fileURLWithPath: keep).appendingPathComponent(file.lastPathComponent)
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: file, to: target)
            }
        }
    }
}
