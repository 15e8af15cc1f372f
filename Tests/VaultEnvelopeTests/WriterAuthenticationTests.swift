import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultJSON
import VaultTestSupport

@testable import VaultEnvelope

/// Issue 14, attacks 1, 2, 4 and 7: a blob not written by a member of the vault is refused, whichever entry it opens
/// through, and nothing the reader stores changes (FORMAT.md §11).
@Suite struct WriterAuthenticationTests {
    static let maxCounter: UInt64 = (1 << 53) - 1
    static let forgedContent = Data(#"{"items":{"pid-1":{"type":"PID","issuer":"https://forger.example"}}}"#.utf8)

    /// The committed `ecdh-es+a256kw` vector and the device key that opens it.
    static func vector() throws -> (blob: Data, key: DeviceKEK) {
        let directory = FormatVectorTests.directory
        let description = try JSONParser().parse(try Data(contentsOf: directory.appendingPathComponent("ecdh-es+a256kw.key.json")))
        let d = try #require(description["key"]?["d"]?.stringValue.flatMap(Base64URL.decode))
        return (
            try Data(contentsOf: directory.appendingPathComponent("ecdh-es+a256kw.blob.json")),
            DeviceKEK(privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: d))
        )
    }

    /// All a forger has: the public key in a stored blob's entry.
    static func recipient(in blob: Data) throws -> PublicKeyRecipient {
        let entry = try #require(try VaultEnvelope(parsing: blob).entries.first)
        return try #require(PublicKeyRecipient(recipientOf: entry))
    }

    /// A forger's anchored blob for `recipient`: its own secret under `vaultID`'s id, at `counter` (by default as
    /// high as a member that accepted counter 1 still takes; `maxCounter` is refused as a jump, FORMAT.md §8 step 3).
    static func forgedAnchoredBlob(
        for recipient: any KeyWrapping, namingVault vaultID: String, epoch: UInt64 = 1, counter: UInt64 = VaultOpener.maxCounterStep
    ) async throws -> Data {
        let store = InMemoryCounterStore()
        await store.advance("forged", to: counter - 1)
        let identity = VaultIdentity(
            rawID: try #require(Base64URL.decode(vaultID)), epoch: epoch,
            secrets: (0..<VaultIdentity.carriedCount(epoch: epoch)).map { _ in SecureRandom.bytes(count: 32) })
        let sealed = try await VaultSealer(counterStore: store, hint: "Forger", clock: TestSupport.clock()).create(
            forgedContent, vaultID: "forged", recipients: [.init(recipient, label: "Phone")], identity: identity)
        #expect(sealed.state.counter == counter)
        return sealed.blob
    }

    /// A device that created its vault and pinned it, as after the first upload.
    static func member(_ key: DeviceKEK, extra: [VaultSealer.Recipient] = []) async throws
        -> (sealer: VaultSealer, opener: VaultOpener, store: InMemoryCounterStore, created: VaultSealer.SealedVault)
    {
        let store = InMemoryCounterStore()
        let sealer = VaultSealer(counterStore: store, hint: "Laptop", clock: TestSupport.clock())
        let created = try await sealer.create(TestSupport.plaintext, vaultID: "v", recipients: [.init(key, label: "Laptop")] + extra)
        try await sealer.markAccepted(created)
        return (sealer, VaultOpener(counterStore: store), store, created)
    }

    /// The code an approver shows for `key`'s entry in `blob` (FORMAT.md §11.4).
    static func code(_ identity: VaultIdentity, _ key: DeviceKEK, _ blob: Data) -> String {
        identity.confirmationCode(forEntry: key.kekID, blobDigest: Data(SHA256.hash(data: blob)))
    }

    static func stored(_ store: InMemoryCounterStore) async -> String {
        "\(await store.highestCounter(for: "v")) \(String(describing: await store.anchor(for: "v")))"
    }

    // MARK: Attack 1: forgery through a public-key entry, and the lock-out

    @Test func aPreAnchorBlobThroughAPublicKeyEntryIsRefusedWithNothingPinned() async throws {
        let (vectorBlob, key) = try Self.vector()
        let store = InMemoryCounterStore()
        let opener = VaultOpener(counterStore: store)
        // Built from nothing but the jwk in the committed vector: a DEK of the forger's choice, the highest counter.
        let dek = SymmetricKey(size: .bits256)
        let forged = try PreAnchorBlob.seal(
            Self.forgedContent, dek: dek, entries: [try await PreAnchorBlob.entry(try Self.recipient(in: vectorBlob), dek: dek)],
            counter: Self.maxCounter)
        // Issue 26 point 1: a new device (or one whose counter file is gone) would take the forger's content and
        // write on under the forger's DEK. With nothing pinned, no version without an identity proves its writer
        // through a public-key entry, genuine or not (FORMAT.md §11.3).
        for blob in [forged, vectorBlob] {
            await #expect { try await opener.open(blob, vaultID: "v", keys: [key]) } throws: {
                VaultEnvelopeError.Code.unconfirmedVault.matches($0)
            }
        }
        #expect(await Self.stored(store) == "0 nil")
    }

    @Test func aPreAnchorBlobThroughASymmetricEntryStillOpensAndRaisesTheCounter() async throws {
        let recovery = try RecoveryCodeKEK(code: .generate())
        let dek = SymmetricKey(size: .bits256)
        let blob = try PreAnchorBlob.seal(
            TestSupport.plaintext, dek: dek, entries: [try await PreAnchorBlob.entry(recovery, dek: dek)], counter: 7)
        let store = InMemoryCounterStore()
        #expect(try await VaultOpener(counterStore: store).open(blob, vaultID: "v", keys: [recovery]).plaintext == TestSupport.plaintext)
        #expect(await Self.stored(store) == "7 nil")
    }

    @Test func aForgedAnchoredBlobIsRefusedByAMemberAndChangesNothing() async throws {
        let key = try DeviceKEK.generate()
        let member = try await Self.member(key)
        let vaultID = try #require(member.created.state.identity?.vaultID)
        let before = await Self.stored(member.store)
        // Past 16 epochs the pinned epoch's secret is no longer carried at all: refused too, as unconfirmed.
        for (epoch, code) in [(1, .writerNotMember), (2, .writerNotMember), (16, .writerNotMember), (40, .unconfirmedVault)]
            as [(UInt64, VaultEnvelopeError.Code)]
        {
            let forged = try await Self.forgedAnchoredBlob(
                for: try Self.recipient(in: member.created.blob), namingVault: vaultID, epoch: epoch)
            await #expect { try await member.opener.open(forged, vaultID: "v", keys: [key]) } throws: { code.matches($0) }
        }
        #expect(await Self.stored(member.store) == before)
        let next = try await member.sealer.seal(TestSupport.plaintext, over: member.created.state)
        #expect(try await member.opener.open(next.blob, vaultID: "v", keys: [key]).state.counter == 2)
    }

    @Test func aReaderWithNothingPinnedRefusesAnAnchoredBlobThroughAPublicKeyEntry() async throws {
        let key = try DeviceKEK.generate()
        let store = InMemoryCounterStore()
        let forged = try await Self.forgedAnchoredBlob(for: key.recipient, namingVault: VaultIdentity.create().vaultID)
        await #expect { try await VaultOpener(counterStore: store).open(forged, vaultID: "v", keys: [key]) } throws: {
            VaultEnvelopeError.Code.unconfirmedVault.matches($0)
        }
        #expect(await Self.stored(store) == "0 nil")
    }

    @Test func recoveryThroughASymmetricEntryLearnsTheAnchor() async throws {
        let recovery = try RecoveryCodeKEK(code: .generate())
        let member = try await Self.member(try DeviceKEK.generate(), extra: [.init(recovery, label: "Recovery code")])
        let store = InMemoryCounterStore()
        _ = try await VaultOpener(counterStore: store).open(member.created.blob, vaultID: "v", keys: [recovery])
        #expect(await store.anchor(for: "v") == member.created.state.identity?.anchor)
        #expect(await store.highestCounter(for: "v") == 1)
    }

    // MARK: Attack 2: cross-serving

    @Test func anotherVaultOfTheSameKeyIsRefusedBeforeAnyKeyIsUsed() async throws {
        let key = try DeviceKEK.generate()
        let vaultA = try await Self.member(key)
        let vaultB = try await Self.member(key)
        let before = await Self.stored(vaultA.store)
        for keys in [[key], []] as [[any KeyEncryptionKey]] {
            await #expect { try await vaultA.opener.open(vaultB.created.blob, vaultID: "v", keys: keys) } throws: {
                VaultEnvelopeError.Code.wrongVault.matches($0)
            }
        }
        #expect(await Self.stored(vaultA.store) == before)
    }

    // MARK: Attack 4: downgrade to the seed form or a pre-anchor version

    @Test func aReaderThatPinnedTheAnchorRefusesPreAnchorAndSeedBlobs() async throws {
        let names = ["a256gcmkw", "seed-android"]
        let scratch = try TestSupport.scratchDirectory()
        for name in names {
            let directory = FormatVectorTests.directory
            let description = try JSONParser().parse(try Data(contentsOf: directory.appendingPathComponent("\(name).key.json")))
            let key = try FormatVectorTests.key(from: description, scratch: scratch)
            let old = try Data(contentsOf: directory.appendingPathComponent("\(name).blob.json"))
            let (sealer, opener) = TestSupport.pair()
            let opened = try await opener.open(old, vaultID: "v", keys: [key])
            #expect(opened.state.identity == nil)
            // The first write after upgrading migrates: a new vault identity, pinned by the writer once saved.
            let migrated = try await sealer.seal(opened.plaintext, over: opened.state, keys: [key], allowingPrompts: true)
            try await sealer.markAccepted(migrated)
            #expect(migrated.state.identity?.epoch == 1)
            await #expect { try await opener.open(old, vaultID: "v", keys: [key]) } throws: {
                VaultEnvelopeError.Code.downgrade.matches($0)
            }
            #expect(try await opener.open(migrated.blob, vaultID: "v", keys: [key]).plaintext == opened.plaintext)
        }
    }

    // MARK: Attack 7: revocation rotates the secret; what a revoked device can still do

    @Test func revocationRotatesTheSecretAndARevokedDevicesForkReachesOnlyMembersThatMissedIt() async throws {
        let (a, b, c, revoked) = (try DeviceKEK.generate(), try DeviceKEK.generate(), try DeviceKEK.generate(), try DeviceKEK.generate())
        let approver = try await Self.member(a, extra: [b, c, revoked].map { .init($0.recipient, label: "member") })
        let epoch1 = try #require(approver.created.state.identity)
        // Each member joined through pairing and pinned epoch 1.
        func joined(_ key: DeviceKEK) async throws -> (VaultOpener, VaultOpener.OpenedVault) {
            let opener = VaultOpener(counterStore: InMemoryCounterStore())
            let opened = try await opener.openForConfirmation(approver.created.blob, vaultID: "v", keys: [key])
            try await opener.confirm(opened, code: Self.code(epoch1, key, approver.created.blob), entryKekID: key.kekID)
            return (opener, opened)
        }
        let (memberB, _) = try await joined(b)
        let (memberC, _) = try await joined(c)
        let (_, revokedView) = try await joined(revoked)

        let remaining = try approver.sealer.revoke(kekID: revoked.kekID, in: approver.created.state)
        let rotated = try await approver.sealer.rotateDEK(TestSupport.plaintext, over: remaining, keys: [a], rotatingVaultSecret: true)
        try await approver.sealer.markAccepted(rotated)
        #expect(rotated.state.identity?.epoch == 2 && rotated.state.identity?.vaultID == epoch1.vaultID)
        _ = try await memberB.open(rotated.blob, vaultID: "v", keys: [b])

        // The revoked device knows epoch 1's secret and writes its own epoch 2 for the others' public keys.
        let forkIdentity = try #require(revokedView.state.identity).rotated()
        let store = InMemoryCounterStore()
        await store.advance("fork", to: Self.maxCounter - 1)
        let exhausting = try await VaultSealer(counterStore: store, clock: TestSupport.clock()).create(
            Self.forgedContent, vaultID: "fork", recipients: [.init(b.recipient, label: "b"), .init(c.recipient, label: "c")],
            identity: forkIdentity)
        // Issue 26 point 9: a fork at 2^53 - 1 would leave the vault no counter to write at; every member refuses it.
        for (opener, key) in [(memberB, b), (memberC, c)] {
            await #expect { try await opener.open(exhausting.blob, vaultID: "v", keys: [key]) } throws: {
                VaultEnvelopeError.Code.counterJump.matches($0)
            }
        }
        let forkStore = InMemoryCounterStore()
        await forkStore.advance("fork", to: 1_000)
        let fork = try await VaultSealer(counterStore: forkStore, clock: TestSupport.clock()).create(
            Self.forgedContent, vaultID: "fork", recipients: [.init(b.recipient, label: "b"), .init(c.recipient, label: "c")],
            identity: forkIdentity)
        // B read the revocation: the fork's epoch-2 secret is not the one it pinned.
        await #expect { try await memberB.open(fork.blob, vaultID: "v", keys: [b]) } throws: {
            VaultEnvelopeError.Code.writerNotMember.matches($0)
        }
        // And an epoch-1 blob of the revoked device's is below what B pinned.
        let epoch1Fork = try await VaultSealer(counterStore: store, clock: TestSupport.clock()).create(
            Self.forgedContent, vaultID: "fork", recipients: [.init(b.recipient, label: "b")],
            identity: try #require(revokedView.state.identity))
        await #expect { try await memberB.open(epoch1Fork.blob, vaultID: "v", keys: [b]) } throws: {
            VaultEnvelopeError.Code.downgrade.matches($0)
        }
        // C had not synced since epoch 1: a fork within reach of its counter gets to it (FORMAT.md §11.6 says so), and
        // its forged counter then makes the genuine version look old to C. This is the window only an out-of-band
        // comparison closes.
        #expect(try await memberC.open(fork.blob, vaultID: "v", keys: [c]).plaintext == Self.forgedContent)
        await #expect { try await memberC.open(rotated.blob, vaultID: "v", keys: [c]) } throws: {
            VaultEnvelopeError.Code.rollback.matches($0)
        }
    }

    @Test func aMemberCanFallSixteenRotationsBehindButNotSeventeen() async throws {
        let key = try DeviceKEK.generate()
        let member = try await Self.member(key)
        var state = member.created.state
        var anchors = [try #require(state.identity?.anchor)]
        for _ in 0..<16 {
            let rotated = try await member.sealer.rotateDEK(TestSupport.plaintext, over: state, keys: [key], rotatingVaultSecret: true)
            state = rotated.state
            anchors.append(try #require(state.identity?.anchor))
        }
        let latest = try await member.sealer.seal(TestSupport.plaintext, over: state)
        #expect(latest.state.identity?.epoch == 17)
        for (index, anchor) in anchors.enumerated() {
            let store = InMemoryCounterStore()
            await store.pin(anchor, for: "v")
            let opening = { try await VaultOpener(counterStore: store).open(latest.blob, vaultID: "v", keys: [key]) }
            if index == 0 {
                await #expect { _ = try await opening() } throws: { VaultEnvelopeError.Code.unconfirmedVault.matches($0) }
                #expect(await store.anchor(for: "v") == anchor)
                // That member confirms again as a new device would, with the code a member shows.
                let opener = VaultOpener(counterStore: store)
                let pending = try await opener.openForConfirmation(latest.blob, vaultID: "v", keys: [key])
                try await opener.confirm(
                    pending, code: Self.code(try #require(latest.state.identity), key, latest.blob), entryKekID: key.kekID)
                #expect(await store.anchor(for: "v") == anchors.last)
            } else {
                _ = try await opening()
                #expect(await store.anchor(for: "v") == anchors.last)
            }
        }
    }

    // MARK: Pairing, both directions

    @Test func aNewDevicePinsTheVaultOnlyWithTheApproversCode() async throws {
        let approverKey = try DeviceKEK.generate()
        let newKey = try DeviceKEK.generate()
        let approver = try await Self.member(approverKey)
        let enrolled = try await approver.sealer.enroll(newKey.recipient, label: "Phone", in: approver.created.state)
        let approved = try await approver.sealer.seal(TestSupport.plaintext, over: enrolled)
        try await approver.sealer.markAccepted(approved)
        let code = Self.code(try #require(approved.state.identity), newKey, approved.blob)
        #expect(code.range(of: #"^[0-9]{3} [0-9]{3}$"#, options: .regularExpression) != nil)

        let store = InMemoryCounterStore()
        let opener = VaultOpener(counterStore: store)
        await #expect { try await opener.open(approved.blob, vaultID: "v", keys: [newKey]) } throws: {
            VaultEnvelopeError.Code.unconfirmedVault.matches($0)
        }
        let pending = try await opener.openForConfirmation(approved.blob, vaultID: "v", keys: [newKey])
        let wrong = String(code.map { $0 == "0" ? "1" : $0 == " " ? " " : "0" })
        await #expect { try await opener.confirm(pending, code: wrong, entryKekID: newKey.kekID) } throws: {
            VaultEnvelopeError.Code.pairingMismatch.matches($0)
        }
        #expect(await Self.stored(store) == "0 nil")

        // A server that hands the new device a vault of its own cannot produce the approver's code.
        let forged = try await Self.forgedAnchoredBlob(for: newKey.recipient, namingVault: try #require(approved.state.identity?.vaultID))
        let forgedPending = try await opener.openForConfirmation(forged, vaultID: "v", keys: [newKey])
        await #expect { try await opener.confirm(forgedPending, code: code, entryKekID: newKey.kekID) } throws: {
            VaultEnvelopeError.Code.pairingMismatch.matches($0)
        }
        #expect(await Self.stored(store) == "0 nil")

        // The code confirms the blob the approver saved and no other, even one a member wrote at the same epoch.
        let later = try await approver.sealer.seal(TestSupport.plaintext, over: approved.state)
        let laterPending = try await opener.openForConfirmation(later.blob, vaultID: "v", keys: [newKey])
        await #expect { try await opener.confirm(laterPending, code: code, entryKekID: newKey.kekID) } throws: {
            VaultEnvelopeError.Code.pairingMismatch.matches($0)
        }

        try await opener.confirm(pending, code: code.replacingOccurrences(of: " ", with: ""), entryKekID: newKey.kekID)
        #expect(await store.anchor(for: "v") == approved.state.identity?.anchor)
        #expect(await store.highestCounter(for: "v") == approved.state.counter)
        await #expect { try await opener.open(forged, vaultID: "v", keys: [newKey]) } throws: {
            VaultEnvelopeError.Code.writerNotMember.matches($0)
        }
    }

    @Test func anRSAMemberConfirmsThroughItsEntrysKekID() async throws {
        // Issue 26 point 4: the code used to cover a P-256 key's X ‖ Y, which an RSA member does not have.
        let rsa = RSAKEK(privateKey: try RSA.Encryption.PrivateKey(pemRepresentation: ReaderRulesTests.rsaPEM))
        let approver = try await Self.member(try DeviceKEK.generate())
        let enrolled = try await approver.sealer.enroll(rsa, label: "RSA member", in: approver.created.state)
        let approved = try await approver.sealer.seal(TestSupport.plaintext, over: enrolled)
        let code = try #require(approved.state.identity).confirmationCode(
            forEntry: rsa.kekID, blobDigest: Data(SHA256.hash(data: approved.blob)))
        let store = InMemoryCounterStore()
        let opener = VaultOpener(counterStore: store)
        let pending = try await opener.openForConfirmation(approved.blob, vaultID: "v", keys: [rsa])
        try await opener.confirm(pending, code: code, entryKekID: rsa.kekID)
        #expect(await store.anchor(for: "v") == approved.state.identity?.anchor)
    }

    @Test func theConfirmationCodeCoversTheVaultTheEntryAndTheBlob() {
        // The same inputs as the Kotlin library's test and a Python computation from FORMAT.md §11.4.
        let identity = VaultIdentity(
            rawID: Data(0..<16), epoch: 3,
            secrets: [Data(repeating: 0x01, count: 32), Data(repeating: 0x02, count: 32), Data(repeating: 0x11, count: 32)])
        let digest = Data(SHA256.hash(data: Data(#"{"v":1}"#.utf8)))
        #expect(identity.confirmationCode(forEntry: "kid-example", blobDigest: digest) == "093 043")
        #expect(identity.confirmationCode(forEntry: "kid-other", blobDigest: digest) != "093 043")
    }

    // MARK: Restoring an older version

    @Test func aPastVersionMustCarryTheCurrentVaultsSecret() async throws {
        let key = try DeviceKEK.generate()
        let member = try await Self.member(key)
        let identity = try #require(member.created.state.identity)
        let forged = try await Self.forgedAnchoredBlob(for: key.recipient, namingVault: identity.vaultID)
        await #expect {
            try await member.opener.openPastVersion(forged, vaultID: "v", keys: [key], checkedAgainst: identity)
        } throws: { VaultEnvelopeError.Code.writerNotMember.matches($0) }
        let other = try await Self.member(key)
        await #expect {
            try await member.opener.openPastVersion(other.created.blob, vaultID: "v", keys: [key], checkedAgainst: identity)
        } throws: { VaultEnvelopeError.Code.wrongVault.matches($0) }
        let genuine = try await member.opener.openPastVersion(member.created.blob, vaultID: "v", keys: [key], checkedAgainst: identity)
        #expect(genuine.plaintext == TestSupport.plaintext)
    }

    @Test func aPastVersionFromBeforeTheLastRevocationMustHaveBeenSeenHere() async throws {
        // Issue 26 point 8: a revoked device knows the secrets of the epochs before its removal, and those stay
        // carried; with the server's help it offers a "kept version" of its own from such an epoch.
        let (a, revoked) = (try DeviceKEK.generate(), try DeviceKEK.generate())
        let member = try await Self.member(a, extra: [.init(revoked.recipient, label: "Revoked")])
        let epoch1 = try #require(member.created.state.identity)
        let remaining = try member.sealer.revoke(kekID: revoked.kekID, in: member.created.state)
        let rotated = try await member.sealer.rotateDEK(TestSupport.plaintext, over: remaining, keys: [a], rotatingVaultSecret: true)
        try await member.sealer.markAccepted(rotated)
        let current = try #require(rotated.state.identity)
        let store = InMemoryCounterStore()
        await store.advance("forged", to: 5)
        let forged = try await VaultSealer(counterStore: store, hint: "Laptop", clock: TestSupport.clock()).create(
            Self.forgedContent, vaultID: "forged", recipients: [.init(a.recipient, label: "Laptop")], identity: epoch1)
        await #expect {
            try await member.opener.openPastVersion(forged.blob, vaultID: "v", keys: [a], checkedAgainst: current)
        } throws: { VaultEnvelopeError.Code.downgrade.matches($0) }
        // The version this device wrote at epoch 1 is still one it may restore.
        let own = try await member.opener.openPastVersion(member.created.blob, vaultID: "v", keys: [a], checkedAgainst: current)
        #expect(own.plaintext == TestSupport.plaintext)
    }

    // MARK: Forks and silent drops

    @Test func aSecondVersionUnderAnAcceptedCounterIsAFork() async throws {
        // Issue 26 point 7: two members write counter 2 from the same version; the server keeps one and serves the
        // other to a reader that already accepted the first. Before, the reader took it silently.
        let (a, b, reader) = (try DeviceKEK.generate(), try DeviceKEK.generate(), try DeviceKEK.generate())
        let member = try await Self.member(a, extra: [.init(b, label: "B"), .init(reader, label: "Reader")])
        let other = VaultSealer(counterStore: InMemoryCounterStore(), hint: "B", clock: TestSupport.clock())
        let first = try await member.sealer.seal(TestSupport.plaintext, over: member.created.state)
        let second = try await other.seal(Self.forgedContent, over: member.created.state)
        #expect(first.state.counter == 2 && second.state.counter == 2)
        let store = InMemoryCounterStore()
        await store.pin(try #require(member.created.state.identity).anchor, for: "v")
        let opener = VaultOpener(counterStore: store)
        _ = try await opener.open(first.blob, vaultID: "v", keys: [reader])
        _ = try await opener.open(first.blob, vaultID: "v", keys: [reader])
        let before = await Self.stored(store)
        await #expect { try await opener.open(second.blob, vaultID: "v", keys: [reader]) } throws: {
            VaultEnvelopeError.Code.forkDetected.matches($0)
        }
        #expect(await Self.stored(store) == before)
        // The writer of the first knows its own: the second is a fork to it too.
        try await member.sealer.markAccepted(first)
        await #expect { try await member.opener.open(second.blob, vaultID: "v", keys: [a]) } throws: {
            VaultEnvelopeError.Code.forkDetected.matches($0)
        }
    }

    @Test func theFileStoreKeepsTheDigestsOfSeenVersionsSealed() async throws {
        let directory = try TestSupport.scratchDirectory()
        let url = directory.appendingPathComponent("counters.sealed")
        let key = SymmetricKey(size: .bits256)
        let store = try FileCounterStore(fileURL: url, sealingKey: key)
        for counter in 1...UInt64(seenBlobsKept + 3) {
            try await store.remember(Data(repeating: UInt8(counter), count: 32), counter: counter, for: "v")
        }
        let reopened = try FileCounterStore(fileURL: url, sealingKey: key)
        #expect(await reopened.acceptedDigest(for: "v", counter: 3) == nil)
        #expect(await reopened.acceptedDigest(for: "v", counter: 4) == Data(repeating: 4, count: 32))
        #expect(await reopened.hasSeen(Data(repeating: UInt8(seenBlobsKept + 3), count: 32), for: "v"))
        #expect(throws: VaultEnvelopeError.self) { try FileCounterStore(fileURL: url, sealingKey: SymmetricKey(size: .bits256)) }
        #expect(throws: VaultEnvelopeError.self) { try FileCounterStore(fileURL: url) }
    }

    // MARK: Shape of the new members

    @Test func identityMembersComeTogetherAndWithTheirSizes() async throws {
        let key = try DeviceKEK.generate()
        let blob = try await Self.member(key).created.blob
        let edits: [(inout [String: Any]) -> Void] = [
            { $0["epoch"] = nil },
            {
                $0["vault_secret"] = nil
                $0["epoch"] = nil
            },
            { $0["vault_id"] = "AAAA" }, { $0["epoch"] = 2 }, { $0["epoch"] = 0 },
            { $0["vault_secret"] = Base64URL.encode(Data(count: 60 + 32)) },
            // Only with the extended form (with counter), as Kotlin already refused (FORMAT.md §11.1).
            {
                $0["counter"] = nil
                $0["dek_seals"] = nil
                $0["macs"] = nil
            },
        ]
        for edit in edits {
            #expect { try VaultEnvelope(parsing: try TestSupport.edit(blob, edit)) } throws: {
                VaultEnvelopeError.Code.malformed.matches($0)
            }
        }
    }

    @Test func theFileStoreKeepsAnchorsAndReadsFilesFromBeforeThem() async throws {
        let url = try TestSupport.scratchDirectory().appendingPathComponent("counters.json")
        try OwnerOnlyFile.create(url, bytes: Data(#"{"v":3}"#.utf8))
        let store = try FileCounterStore(fileURL: url)
        let counter = await store.highestCounter(for: "v")
        let none = await store.anchor(for: "v")
        #expect(counter == 3 && none == nil)
        let anchor = VaultIdentity.create().anchor
        try await store.pin(anchor, for: "v")
        let reopened = try FileCounterStore(fileURL: url)
        let kept = await reopened.anchor(for: "v")
        let keptCounter = await reopened.highestCounter(for: "v")
        #expect(kept == anchor && keptCounter == 3)
        try await reopened.forget("v")
        #expect(try await FileCounterStore(fileURL: url).anchor(for: "v") == nil)
    }
}
