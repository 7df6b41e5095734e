import CirclesAPI
import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NIOCore
import OpenAPIRuntime
import Testing
@testable import CirclesService

/// Circles' part of a user's data export (`user_export_requested`): every table of the schema is
/// exported or says why not, and the part holds the user's rows, both sides of their DM threads,
/// their post photo, and of the people they share a circle with nothing but ids.
@Suite("Circles export")
struct CirclesExportTests {
    @Test("the export plan covers every table and column of the migrated schema")
    func planMatchesSchema() async throws {
        try await withRunningCircles { circles in
            let problems = try await exportPlanProblems(CirclesExport.plan(photos: .images("post-photos", isPublic: false)), database: circles.service.database)
            #expect(problems == [])
            // The check sees the schema: a plan without tables has every one of them uncovered.
            let schema = circles.service.database.schema
            let empty = ExportPlan(service: .circles, about: "", tables: [], notExported: [:])
            #expect(try await exportPlanProblems(empty, database: circles.service.database).contains("\(schema).posts is neither exported nor listed with a reason"))
        }
    }

    @Test("user_export_requested writes the user's rows, both sides of their threads and their post photo; others appear by id only")
    func partHoldsTheUsersData() async throws {
        try await withRunningCircles { circles in
            let me = try await circles.service.user(email: "export.me@example.com")
            let mine = circles.api(me)
            _ = try await mine.getProfile().ok
            _ = try await mine.updateProfile(body: .json(.init(displayName: "Export Me", handle: "export_me", bio: "I keep my data"))).ok
            let other = try await circles.service.user(email: "zebulon@other.example")
            let others = circles.api(other)
            _ = try await others.getProfile().ok
            _ = try await others.updateProfile(body: .json(.init(displayName: "Zebulon Otherside", handle: "zeb_other", fullName: "Zebulon Q Otherside",
                                                                   address: "1 Secret Lane"))).ok
            let third = try await circles.user(handle: "third_person"), fourth = try await circles.user(handle: "fourth_person")
            let circle = try await circles.circle(owner: me, members: [other, fourth])
            let theirs = try await circles.circle(owner: other, name: "Theirs")
            // An invite nobody claimed yet: its code must not leave the service.
            let open = try await mine.createInvite(path: .init(circleId: circle.lowercased)).created.body.json.code

            // What the user wrote and answered.
            let poll = try await circles.post(circle, as: me, .init(_type: .poll, body: "Lunch?", pollOptions: ["Tacos", "Sushi"]))
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 7, 7, 7]
            _ = try await mine.setPostPhoto(path: .init(postId: poll), body: .png(HTTPBody(png))).ok
            let note = try await circles.post(circle, as: other, .init(_type: .note, body: "Zebulon's secret note"))
            let otherPoll = try await circles.post(circle, as: other, .init(_type: .poll, body: "Movie?", pollOptions: ["Alien", "Heat"]))
            let event = try await circles.post(circle, as: other, .init(_type: .event, body: "Hike", startsAt: try #require(ISO8601.parse("2030-01-01T09:00:00Z"))))
            _ = try await mine.addPostReaction(path: .init(postId: note, emoji: "🎉")).ok
            _ = try await mine.keepPost(path: .init(postId: note)).ok
            let option = try #require(try await circles.card(otherPoll, as: me).pollOptions?.last?.id)
            _ = try await mine.setPollVote(path: .init(postId: otherPoll), body: .json(.init(optionId: option))).ok
            _ = try await mine.setRSVP(path: .init(postId: event), body: .json(.init(status: .going))).ok
            _ = try await mine.setPresence(path: .init(circleId: circle.lowercased), body: .json(.init(status: .deepWork))).ok
            _ = try await mine.requestAdd(path: .init(circleId: circle.lowercased), body: .json(.init(handle: "third_person"))).created
            _ = try await others.requestAdd(path: .init(circleId: theirs.lowercased), body: .json(.init(handle: "export_me"))).created
            _ = third

            // A thread with both sides, and one between two others.
            let thread = try await mine.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: other.id.lowercased))).ok.body.json.id
            _ = try await mine.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "hi from me"))).created
            let reply = try await others.sendMessage(path: .init(threadId: thread), body: .json(.init(body: "hi back from Zeb"))).created.body.json.id
            _ = try await mine.addMessageReaction(path: .init(threadId: thread, messageId: reply, emoji: "❤️")).ok
            let aside = try await others.openThread(path: .init(circleId: circle.lowercased), body: .json(.init(userId: fourth.id.lowercased))).ok.body.json.id
            _ = try await others.sendMessage(path: .init(threadId: aside), body: .json(.init(body: "not for the export"))).created

            let exportID = UUID()
            try await circles.service.publishAuthEvent(UserExportRequested(exportId: exportID, userId: me.id, app: .mycirclee, requestedAt: Date()), user: me.id)
            let backend = FileSystemStorageBackend(root: circles.storageRoot)
            let bucket = UserExport.bucket.name
            let part = try await WrittenExportPart.read(backend, export: exportID, service: .circles)
            let (manifest, prefix, text, data) = (part.manifest, part.prefix, part.text, part.data)
            let photoPath = "files/post-photos/\(circle.lowercased)/\(poll)"
            #expect(manifest.service == .circles && manifest.entries == ["data.json", "README.md", photoPath], "\(manifest.entries)")
            #expect(try await backend.get(bucket: bucket, key: "\(prefix)/\(photoPath)")?.body == ByteBuffer(bytes: png))

            #expect(data["user_id"]?.stringValue == me.id.lowercased && data["app"]?.stringValue == "mycirclee")
            func rows(_ table: String) -> [JSONValue] { part.rows(table) }
            let profile = try #require(rows("profile").first)
            #expect(profile["display_name"]?.stringValue == "Export Me" && profile["email"]?.stringValue == "export.me@example.com" && profile["handle"]?.stringValue == "export_me")
            #expect(rows("circles").map { $0["name"]?.stringValue } == ["Inner"] && rows("circles").first?["role"]?.stringValue == "owner")
            #expect(rows("posts").map { $0["body"]?.stringValue } == ["Lunch?"])
            #expect(rows("posts").first?["photo"]?.stringValue == "\(circle.lowercased)/\(poll)")
            #expect(rows("poll_options").map { $0["label"]?.stringValue } == ["Tacos", "Sushi"])
            #expect(rows("post_reactions").map { $0["post_id"]?.stringValue } == [note])
            #expect(rows("kept_posts").map { $0["post_id"]?.stringValue } == [note])
            #expect(rows("poll_votes").map { $0["option_label"]?.stringValue } == ["Heat"])
            #expect(rows("event_rsvps").map { $0["status"]?.stringValue } == ["going"])
            #expect(rows("presence").map { $0["status"]?.stringValue } == ["deep_work"])
            #expect(rows("add_requests").count == 2)
            // The two claimed invites (the members joined with them) show their spent codes; the open one none.
            let invites = rows("invites")
            #expect(invites.count == 3 && invites.filter { $0["code"]?.stringValue == nil }.count == 1)
            #expect(!text.contains(open), "a usable invite code is in the export")
            #expect(rows("dm_threads").map { $0["other_user_id"]?.stringValue } == [other.id.lowercased])
            #expect(rows("dm_messages").map { $0["body"]?.stringValue } == ["hi from me", "hi back from Zeb"])
            #expect(rows("dm_messages").map { $0["sender_id"]?.stringValue } == [me.id.lowercased, other.id.lowercased])
            #expect(rows("dm_reactions").map { $0["emoji"]?.stringValue } == ["❤️"])
            #expect(manifest.rows["dm_messages"] == 2 && manifest.rows["posts"] == 1)
            // Of the others: ids only. No name, email, address, nor what they wrote outside the thread.
            for secret in ["Zebulon Otherside", "zebulon@other.example", "1 Secret Lane", "zeb_other", "Zebulon's secret note", "not for the export", "third_person"] {
                #expect(!text.contains(secret), "\(secret) is in the export")
            }
            #expect(part.readme.contains("## dm_messages"))
        }
    }
}

