import VaultCore

/// The reads and writes of one save, run inside a single store transaction.
///
/// Each store supplies the SQL; `save(_:historyVersions:)` holds the one copy of the decisions
/// (rate limit, precondition, sync ID, history trim) so SQLite and PostgreSQL cannot drift apart.
protocol SaveSteps {
    /// Serializes this user's saves until the transaction ends and returns the last sync ID ever
    /// issued to the user, which outlives `delete` so sync IDs keep increasing.
    func lockUser(_ key: StorageKey) throws(StoreError) -> UTCTimestamp?

    /// The instants of the newest `limit` accepted saves after `horizon` (milliseconds).
    func recentSaves(_ key: StorageKey, after horizon: Int64, limit: Int) throws(StoreError) -> [Int64]

    /// The current version's stamp, header fields and write key; `body` is left empty.
    func currentVersion(_ key: StorageKey) throws(StoreError) -> StoredVault?

    /// Writes an accepted save: inserts the version, records `syncID` as the user's last issued one,
    /// erases all but the newest `keeping` versions, records the save at `request.now` and forgets the
    /// user's saves at or before `horizon`. One step, so a store can send it in as few round trips as it likes.
    func write(_ request: SaveRequest, syncID: UTCTimestamp, keeping: Int, forgettingThrough horizon: Int64) throws(StoreError)
}

extension SaveSteps {
    /// Runs one save: refused saves write nothing, accepted ones write the version, the trim and the save record.
    func save(_ request: SaveRequest, historyVersions: Int) throws(StoreError) -> SaveOutcome {
        let lastSyncID = try lockUser(request.key)
        let horizon = request.rateLimit.horizon(now: request.now)
        let decision = try request.rateLimitDecision(recentSaves: recentSaves)
        if case .limited = decision { return .rateLimited(decision) }

        if let refusal = request.refusal(by: try currentVersion(request.key)) { return refusal }

        let syncID = SyncID.next(after: lastSyncID, now: request.now)
        try write(request, syncID: syncID, keeping: historyVersions, forgettingThrough: horizon)
        return .saved(syncID: syncID, decision: decision)
    }
}

extension SaveRequest {
    /// What refuses this save against `current` (nil: nothing stored): its precondition, then its writer proof; nil
    /// when both admit it.
    func refusal(by current: StoredVault?) -> SaveOutcome? {
        guard precondition.admits(current: current?.syncID) else { return .conflict(current: current) }
        // After the precondition: a member whose copy is stale learns of the newer version (409), not of a refusal.
        guard WriterProof.admits(proof, current: current) else { return .writerRefused }
        return nil
    }

    /// Whether the cap admits this save, from the instants `recentSaves` returns for the user (its arguments: the key,
    /// the window's horizon and the cap): the newest `limit` saves decide both whether the cap is reached and when a
    /// slot frees.
    ///
    /// - Throws: what `recentSaves` throws.
    func rateLimitDecision(
        recentSaves: (StorageKey, Int64, Int) throws(StoreError) -> [Int64]
    ) throws(StoreError) -> SlidingWindowRateLimit.Decision {
        let accepted = try recentSaves(key, rateLimit.horizon(now: now), rateLimit.limit)
        return rateLimit.decide(acceptedSaves: accepted, now: now)
    }
}
