import ColonyModels
import ColonyStorage

/// What nearby writes of a user into their data export (`user_export_requested`): their profile
/// and settings, their reported position (exact and as others were shown it), the blocks they
/// made (the blocked person by id only) and their profile photo.
enum NearbyExport {
    /// The photo's key, as `PictureKey` makes it.
    static let photoKeySQL = PictureKey.sql(owner: "id", version: "photo_version")

    static func plan(photos: StorageBucket) -> ExportPlan {
        ExportPlan(
            service: .nearby,
            about: "SocialSpot: your profile and settings, where you last shared your location, and the people you blocked.",
            tables: [
                ExportTable("profile", about: "Your profile and the app's settings.", sources: ["profiles"], sql: """
                    SELECT id, name, bio, school, birthday, social_links,
                           CASE WHEN photo_version IS NOT NULL THEN \(photoKeySQL) END AS photo,
                           dark_mode, satellite_map, share_location, created_at, updated_at
                    FROM profiles WHERE id = $1
                    """, fields: [
                        "id": "Your account's id.",
                        "name": "Your name as people nearby see it.",
                        "bio": "Your bio.",
                        "school": "Your school or university, if you gave it.",
                        "birthday": "Your birthday, if you gave it (others see only your age).",
                        "social_links": "Your social links by platform (instagram, snapchat, tiktok, linkedin, youtube, x, other).",
                        "photo": "Your profile photo, if any: the file files/profile-photos/{photo} in this export.",
                        "dark_mode": "Whether the app uses dark mode.",
                        "satellite_map": "Whether the map shows satellite imagery.",
                        "share_location": "Whether you share your location.",
                        "created_at": "When the profile was made.",
                        "updated_at": "When the profile last changed.",
                    ]),
                // The point exists only while the user shares and reports (it expires after minutes).
                ExportTable("location", about: "Your last reported position, kept only while you share your location and for a few minutes after each report.",
                            sources: ["locations"], sql: """
                    SELECT ST_Y(position::geometry) AS latitude, ST_X(position::geometry) AS longitude, accuracy_m,
                           ST_Y(shown::geometry) AS shown_latitude, ST_X(shown::geometry) AS shown_longitude, updated_at
                    FROM locations WHERE user_id = $1
                    """, fields: [
                        "latitude": "The latitude your phone reported.",
                        "longitude": "The longitude your phone reported.",
                        "accuracy_m": "How accurate your phone said the position was, in meters.",
                        "shown_latitude": "The latitude others were shown: your position moved by a secret offset and rounded.",
                        "shown_longitude": "The longitude others were shown.",
                        "updated_at": "When you reported it.",
                    ]),
                .blocks,
                .reportsFiled,
            ],
            files: [
                ExportFiles(photos, about: "your profile photo.", sql: """
                    SELECT \(photoKeySQL) FROM profiles WHERE id = $1 AND photo_version IS NOT NULL
                    """),
            ],
            notExported: [
                "deleted_users": "ids of erased accounts only",
                "location_noise_key": "the service's secret key for everyone's location offsets, nothing of a person's",
            ]
        )
    }
}
