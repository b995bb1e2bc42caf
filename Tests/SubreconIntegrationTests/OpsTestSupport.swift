import StoreSimulator

/// A Pushgateway stand-in on the loopback simulator server: records every PUT under `/metrics/` and answers 200.
actor RecordingPushgateway: SimulatorRoute {
    private(set) var requests: [SimulatorRequest] = []

    nonisolated func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        guard request.path.hasPrefix("/metrics/") else { return nil }
        await record(request)
        return request.method == "PUT" ? SimulatorResponse(status: 200) : SimulatorResponse(status: 405)
    }

    private func record(_ request: SimulatorRequest) { requests.append(request) }
}
