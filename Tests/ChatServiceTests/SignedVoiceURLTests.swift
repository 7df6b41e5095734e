import ChatAPI
import ChatService
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import Testing

/// Starts the chat service (real Postgres) whose storage re-checks a signed URL's signer with
/// answers kept `signerCheckTTL`.
func withRunningChat(signerCheckTTL: Duration, _ body: @Sendable (RunningChat) async throws -> Void) async throws {
    let settings = ChatSettings(maxImageBytes: 64 << 10, maxVoiceBytes: 256 << 10)
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-chat-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    @Sendable func storage(_ base: String) -> Storage {
        Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("chat-tests-signing-key-0123456789abcdef".utf8),
                signerCheckTTL: signerCheckTTL)
    }
    try await withRunningService(.chat, app: .unify, apiPrefix: "/chat/v1", configure: { $0.maxUploadBytes = settings.maxUploadBytes }, definition: { base in
        ChatService.definition(settings: settings, storage: storage(base))
    }) { service in
        try await body(RunningChat(service: service, storageRoot: root, settings: settings, storage: storage(service.base)))
    }
}

@Suite("Chat: a voice message's signed URL follows its signer's membership")
struct SignedVoiceURLTests {
    /// The bound the test configures, and how long it waits at most for it to hold.
    static let bound: Duration = .seconds(3)
    static let deadline: Duration = .seconds(90)

    /// A voice message: its stable URL and what signing it names.
    struct Voice {
        let url: String
        let path: ChatAPI.Operations.SignVoiceMessages.Input.Path
    }

    func voiceMessage(_ chat: RunningChat, group: UUID, from user: RunningService.User) async throws -> Voice {
        let sent = try await chat.api(user).sendVoiceMessage(path: .init(groupId: group.uuidString), query: .init(duration: 2.5), body: .audioMp4(upload(AudioFixtures.m4a))).created.body.json
        // A storage path names the object as stored: ids in lower case, as Colony writes them.
        return Voice(url: try #require(sent.voiceUrl), path: .init(groupId: group.lowercased, messageId: sent.id.lowercased()))
    }

    func sign(_ chat: RunningChat, _ voice: Voice, as user: RunningService.User, seconds: Int = 604_800) async throws -> String {
        try await chat.api(user).signVoiceMessages(path: voice.path, body: .json(.init(expiresIn: seconds))).ok.body.json.signedUrl
    }

    // The signed URLs are fetched raw: exactly as the answers gave them, and tampered with.

    /// Polls `url` without a token until it stops answering 200, at most `deadline`: the status
    /// and how long it took.
    func waitUntilRefused(_ chat: RunningChat, _ url: String) async throws -> (status: Int, code: String?, after: Duration) {
        let start = ContinuousClock.now
        while true {
            let reply = try await chat.service.request(.GET, url, as: nil)
            if reply.status != 200 || ContinuousClock.now - start > Self.deadline { return (reply.status, reply.code, ContinuousClock.now - start) }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    @Test("removed through the API, a member's week-long signed URL stops within the bound; the others' keep working")
    func removedMember() async throws {
        try await withRunningChat(signerCheckTTL: Self.bound) { chat in
            let owner = try await chat.user(), member = try await chat.user(), stayer = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member, stayer])
            let stable = try await voiceMessage(chat, group: group, from: owner)
            let memberURL = try await sign(chat, stable, as: member)
            let stayerURL = try await sign(chat, stable, as: stayer)
            #expect(memberURL.contains(".\(member.id.uuidString.lowercased())."), "the token names its signer")
            for url in [memberURL, stayerURL] {
                let served = try await chat.service.request(.GET, url, as: nil)
                #expect(served.status == 200 && served.bytes == AudioFixtures.m4a)
            }

            #expect(try await answer { try await chat.api(owner).removeMember(path: .init(groupId: group.uuidString, userId: member.id.uuidString)) }.status == 204)
            let refused = try await waitUntilRefused(chat, memberURL)
            #expect(refused.status == 403 && refused.code == "invalid_signature", "\(refused)")
            #expect(refused.after <= Self.bound + .seconds(2), "refused within the bound: \(refused.after)")
            #expect(try await chat.service.request(.GET, stayerURL, as: nil).bytes == AudioFixtures.m4a, "a current member's URL keeps working")
            // Nor can they sign again.
            #expect(try await answer { try await chat.api(member).signVoiceMessages(path: stable.path, body: .json(.init())) }.status == 404)
        }
    }

    @Test("leaving the group, and the group's deletion, end the URL too")
    func leftAndDeleted() async throws {
        try await withRunningChat(signerCheckTTL: .zero) { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let stable = try await voiceMessage(chat, group: group, from: member)
            let memberURL = try await sign(chat, stable, as: member)
            let ownerURL = try await sign(chat, stable, as: owner)
            #expect(try await chat.service.request(.GET, memberURL, as: nil).status == 200)
            #expect(try await answer { try await chat.api(member).leaveGroup(path: .init(groupId: group.uuidString)) }.status < 300)
            #expect(try await chat.service.request(.GET, memberURL, as: nil).status == 403, "with no caching, at once")
            #expect(try await chat.service.request(.GET, ownerURL, as: nil).status == 200)
            #expect(try await answer { try await chat.api(owner).deleteGroup(path: .init(groupId: group.uuidString)) }.status == 204)
            #expect(try [403, 404].contains(try await chat.service.request(.GET, ownerURL, as: nil).status))
        }
    }

    @Test("tampered, expired, another object's path, another signer: refused")
    func refused() async throws {
        try await withRunningChat(signerCheckTTL: .seconds(30)) { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let first = try await voiceMessage(chat, group: group, from: owner)
            let second = try await voiceMessage(chat, group: group, from: owner)
            let url = try await sign(chat, first, as: member, seconds: 60)
            let secondPath = try #require(second.url.split(separator: "/voice-messages/").last)
            let firstPath = try #require(first.url.split(separator: "/voice-messages/").last)
            let token = try #require(url.split(separator: "token=").last.map(String.init))
            let parts = token.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            func get(_ url: String) async throws -> (Int, String?) {
                let reply = try await chat.service.request(.GET, url, as: nil)
                return (reply.status, reply.code)
            }
            #expect(try await get(url).0 == 200)
            let flipped = (parts[2].first == "A" ? "B" : "A") + parts[2].dropFirst()
            #expect(try await get(url.replacingOccurrences(of: parts[2], with: flipped)) == (403, "invalid_signature"))
            #expect(try await get(url.replacingOccurrences(of: String(firstPath), with: String(secondPath))) == (403, "invalid_signature"))
            #expect(try await get(url.replacingOccurrences(of: parts[1], with: owner.id.uuidString.lowercased())) == (403, "invalid_signature"))
            #expect(try await get(url.replacingOccurrences(of: "\(parts[1]).", with: "")) == (400, "invalid_signature"))
            #expect(try await get(url.replacingOccurrences(of: "token=", with: "token=1")) == (403, "invalid_signature"))
            let expired = url.replacingOccurrences(of: parts[0], with: String(Int64(Date().timeIntervalSince1970) - 10))
            #expect(try await get(expired) == (403, "invalid_signature"), "a changed expiry is a wrong MAC")
            #expect(try await get(url.replacingOccurrences(of: "?token=\(token)", with: "")) == (400, "invalid_signature"))
            // Really expired: a second's URL, two seconds later.
            let short = try await sign(chat, first, as: member, seconds: 1)
            try await Task.sleep(for: .milliseconds(2100))
            let late = try await chat.service.request(.GET, short, as: nil)
            #expect(late.status == 403 && late.body["message"]?.stringValue == "signature expired")
        }
    }
}
