/// The circles service's OpenAPI 3.1 document, served at GET /circles/v1/openapi.json and checked
/// against the registered routes by the tests.
enum CirclesOpenAPI {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Colony circles service (MyCirclee)",
    "version": "1.0.0",
    "description": "MyCirclee's private circles: profiles, circles and membership (single-use invite codes valid 48 hours, add requests by handle), presence, ephemeral posts (notes, events, asks, polls) that expire 24 hours after creation, and direct messages between members. Only access tokens of the mycirclee app are accepted. All times are ISO 8601 in UTC with milliseconds; `birthday` is a `YYYY-MM-DD` date; ids are UUIDs. JSON keys are snake_case; optional fields without a value are left out. Everything about a circle — its members, presence, posts and DMs — is for its members only: a non-member gets 404 for all of it, as if it did not exist. Expired posts are 404 too, and a job deletes them every minute (`post_expired`). Post photos are uploaded as raw request bodies with their Content-Type (not multipart) into the private bucket `post-photos` and handed out as signed, time-limited URLs. Changes reach members through the realtime service as events (`circle_created`, `circle_member_joined`, `circle_member_left`, `circle_deleted`, `post_created`, `post_updated`, `post_deleted`, `post_expired`, `post_reacted`, `poll_voted`, `event_rsvped`, `dm_sent`, `dm_read`, `presence_changed`). Errors are `{code, message}`."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "tags": [
    {"name": "Meta"},
    {"name": "Profile", "description": "The caller's profile."},
    {"name": "Circles", "description": "Circles and their members."},
    {"name": "Invites", "description": "Invite codes and add requests."},
    {"name": "Presence", "description": "Each member's status per circle."},
    {"name": "Posts", "description": "Ephemeral posts, their photos, reactions, votes, RSVPs and kept marks."},
    {"name": "DMs", "description": "Direct messages between members of a circle."}
  ],
  "paths": {
    "/circles/v1/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "tags": ["Meta"],
        "summary": "This OpenAPI document",
        "description": "Public: no token needed.",
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenAPIDocument"}}}}},
        "security": []
      }
    },
    "/circles/v1/profile": {
      "get": {
        "operationId": "getProfile",
        "tags": ["Profile"],
        "summary": "The caller's own profile",
        "description": "The owner's view, with the private fields `address`, `phone`, `email` and `birthday`. Fellow members only ever see the public profile (in member lists and DM threads). The profile is created on first use if auth's registration event has not arrived yet (`display_name` from the email's local part or `New member`, a suggested `handle`).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "patch": {
        "operationId": "updateProfile",
        "tags": ["Profile"],
        "summary": "Edit the caller's profile",
        "description": "Only the fields sent change: an absent field is left as it is. `null` (or a blank string) clears `bio`, `full_name`, `location`, `address` and `phone`; null clears `birthday`; null leaves `display_name`, `handle` and `dm_privacy` as they are. Text fields are trimmed: `display_name` 1–60 characters, `bio` at most 300, `full_name` at most 100, `location` at most 100, `address` at most 300, `phone` at most 32. `handle` is trimmed, lowercased and loses a leading `@`; it must be 3–30 of `a-z`, `0-9`, `_` and `.`, and unique (409 `handle_taken`). `birthday` is a past `YYYY-MM-DD` date, not before 1900. `dm_privacy` decides who may message the caller: `anyone` (any fellow member), `reciprocal` (only members whose own `dm_privacy` is not `nobody`), `nobody`. `is_pro`, `email` and the ids cannot be changed here.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProfilePatch"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "The handle belongs to someone else (`handle_taken`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Invalid fields (`validation_failed`): a display name not 1–60 characters after trimming, a bio, full name, location, address or phone over its limit, a handle that is not 3–30 of a-z, 0-9, `_` and `.`, a birthday in the future or before 1900, an unknown `dm_privacy`, or a field of the wrong type.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/circles": {
      "get": {
        "operationId": "listCircles",
        "tags": ["Circles"],
        "summary": "The caller's circles",
        "description": "Every circle the caller is a member of, in the order they joined, with their role and the member count.",
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Circle"}, "description": "In the order the caller joined them."}
              }
            }
          },
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "post": {
        "operationId": "createCircle",
        "tags": ["Circles"],
        "summary": "Create a circle",
        "description": "Creates a circle with the caller as its owner and only member. `name` is trimmed and must be 1–60 characters. Goes out as a `circle_created` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CircleName"}}}},
        "responses": {
          "201": {
            "description": "Created; the new circle (role `owner`, `member_count` 1).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Circle"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`name` missing, not a string, or not 1–60 characters after trimming (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/circles/{circle_id}": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "get": {
        "operationId": "getCircle",
        "tags": ["Circles"],
        "summary": "One of the caller's circles",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. ",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Circle"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"}
        }
      },
      "patch": {
        "operationId": "renameCircle",
        "tags": ["Circles"],
        "summary": "Rename a circle",
        "description": "Owner only (403 `owner_only` for other members). Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. `name` is trimmed and must be 1–60 characters.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CircleName"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Circle"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/OwnerOnly"},
          "404": {"$ref": "#/components/responses/CircleNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`name` missing, not a string, or not 1–60 characters after trimming (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteCircle",
        "tags": ["Circles"],
        "summary": "Delete a circle",
        "description": "Owner only (403 `owner_only` for other members). Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Deletes the circle with its memberships, invites, add requests, posts (with their photos, reactions, votes, RSVPs and kept marks), DM threads and presence. Goes out as a `circle_deleted` event naming the former members.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/OwnerOnly"},
          "404": {"$ref": "#/components/responses/CircleNotFound"}
        }
      }
    },
    "/circles/v1/circles/{circle_id}/members": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "get": {
        "operationId": "listMembers",
        "tags": ["Circles"],
        "summary": "A circle's members",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Each member with their role, when they joined, and their public profile (never address, phone, email or birthday). The owner comes first, then members in the order they joined.",
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {"$ref": "#/components/schemas/Member"},
                  "description": "The owner first, then in the order they joined."
                }
              }
            }
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"}
        }
      }
    },
    "/circles/v1/circles/{circle_id}/members/{user_id}": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}, {"$ref": "#/components/parameters/MemberUserId"}],
      "delete": {
        "operationId": "removeMember",
        "tags": ["Circles"],
        "summary": "Remove a member",
        "description": "Owner only (403 `owner_only` for other members). Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Removes `user_id` from the circle with their presence and kept marks in it; their DM threads in the circle disappear for both parties. The owner cannot remove themselves (422; use leave). Goes out as a `circle_member_left` event (reason `removed`).",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/OwnerOnly"},
          "404": {
            "description": "The caller is not in the circle or it does not exist (`circle_not_found`), or `user_id` is not a member or not a UUID (`member_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The owner tried to remove themselves (`validation_failed`); use POST /circles/v1/circles/{circle_id}/leave.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/circles/{circle_id}/leave": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "post": {
        "operationId": "leaveCircle",
        "tags": ["Circles"],
        "summary": "Leave a circle",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. The caller leaves the circle (no body needed). When the owner leaves, ownership passes to the longest-standing member; an owner who was alone deletes the circle (as DELETE would). The caller's presence and kept marks in the circle go, and their DM threads there disappear. Goes out as a `circle_member_left` event (reason `left`), or `circle_deleted`.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"}
        }
      }
    },
    "/circles/v1/circles/{circle_id}/invites": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "post": {
        "operationId": "createInvite",
        "tags": ["Invites"],
        "summary": "Create an invite code",
        "description": "Any member may invite. Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Answers a fresh code of 10 characters (A–Z without I and O, 2–9): single use, valid for 48 hours. No body needed.",
        "responses": {
          "201": {"description": "Created; the new code.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Invite"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"}
        }
      }
    },
    "/circles/v1/invites/claim": {
      "post": {
        "operationId": "claimInvite",
        "tags": ["Invites"],
        "summary": "Join a circle with an invite code",
        "description": "The code is trimmed and matched case-insensitively. Claiming is atomic: of two concurrent claims of one code exactly one wins, and the other gets 410 `invite_used`. A code the caller cannot use because they are already in its circle is refused with 409 `already_member` and stays unused. Answers the joined circle; goes out as a `circle_member_joined` event (via `invite`).",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/InviteClaim"}}}},
        "responses": {
          "200": {
            "description": "Joined; the circle, with role `member`.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Circle"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "No such code (`invite_invalid`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The caller is already a member of the code's circle (`already_member`); the code stays unused.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "410": {
            "description": "The code has expired, 48 hours after it was made (`invite_expired`), or was already used (`invite_used`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`code` missing or not a string (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/circles/{circle_id}/add-requests": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "post": {
        "operationId": "requestAdd",
        "tags": ["Invites"],
        "summary": "Ask to add someone to a circle",
        "description": "Any member may ask to add someone by `handle` (trimmed, lowercased, a leading `@` dropped). Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. The request waits until the circle's owner or the invitee accepts or declines it (POST /circles/v1/add-requests/{request_id}/accept or /decline). There is at most one pending request per person and circle.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AddRequestCreate"}}}},
        "responses": {
          "201": {
            "description": "Created; the pending request.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AddRequest"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "The caller is not in the circle or it does not exist (`circle_not_found`), or nobody has this handle (`user_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The person is already a member (`already_member`), or a request for them is already pending (`add_request_pending`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`handle` missing, not a string, or not 3–30 of a-z, 0-9, `_` and `.` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/add-requests": {
      "get": {
        "operationId": "listAddRequests",
        "tags": ["Invites"],
        "summary": "Pending add requests the caller can answer",
        "description": "The pending requests inviting the caller and those for circles the caller owns, newest first.",
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/AddRequest"}, "description": "Pending requests, newest first."}
              }
            }
          },
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/circles/v1/add-requests/{request_id}/accept": {
      "parameters": [{"$ref": "#/components/parameters/RequestId"}],
      "post": {
        "operationId": "acceptAddRequest",
        "tags": ["Invites"],
        "summary": "Accept an add request",
        "description": "Only the circle's owner or the invitee may answer: another member of the circle gets 403 `not_allowed`; anyone else (or an unknown or malformed id) 404 `add_request_not_found`. A request is answered once (409 `add_request_decided` afterwards). Accepting adds the invitee to the circle as a member (unless they joined meanwhile), with a `circle_member_joined` event (via `add_request`). No body needed.",
        "responses": {
          "200": {
            "description": "The request, now `accepted`.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AddRequest"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is a member of the circle but neither its owner nor the invitee (`not_allowed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such request the caller may see (`add_request_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The request was already accepted or declined (`add_request_decided`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/add-requests/{request_id}/decline": {
      "parameters": [{"$ref": "#/components/parameters/RequestId"}],
      "post": {
        "operationId": "declineAddRequest",
        "tags": ["Invites"],
        "summary": "Decline an add request",
        "description": "Only the circle's owner or the invitee may answer: another member of the circle gets 403 `not_allowed`; anyone else (or an unknown or malformed id) 404 `add_request_not_found`. A request is answered once (409 `add_request_decided` afterwards). No body needed.",
        "responses": {
          "200": {
            "description": "The request, now `declined`.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AddRequest"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is a member of the circle but neither its owner nor the invitee (`not_allowed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such request the caller may see (`add_request_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The request was already accepted or declined (`add_request_decided`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/circles/{circle_id}/presence": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "get": {
        "operationId": "listPresence",
        "tags": ["Presence"],
        "summary": "The members' presence in a circle",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. The status each member has set in this circle (members who never set one are left out), most recently changed first.",
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Presence"}, "description": "Most recently changed first."}
              }
            }
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"}
        }
      },
      "put": {
        "operationId": "setPresence",
        "tags": ["Presence"],
        "summary": "Set the caller's presence in a circle",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Sets the caller's status in this circle (one per user and circle). Goes out as a `presence_changed` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PresenceUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Presence"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`status` missing or not one of `free`, `deep_work`, `out`, `still_up`, `asleep` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/circles/{circle_id}/posts": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "get": {
        "operationId": "listPosts",
        "tags": ["Posts"],
        "summary": "A circle's feed",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. The circle's live posts, newest first, `limit` per page; expired posts are never returned. Pass a page's `next_cursor` as `before` for the next (older) page; `next_cursor` is absent on the last page.",
        "parameters": [
          {
            "name": "before",
            "in": "query",
            "description": "An opaque cursor: a page's `next_cursor`. Without it, the newest posts.",
            "schema": {"type": "string"}
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Posts per page.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FeedPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"},
          "422": {
            "description": "`limit` not 1–100, or `before` not a cursor from an earlier page (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createPost",
        "tags": ["Posts"],
        "summary": "Post to a circle",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Creates a post that lives 24 hours (`expires_at`); a job deletes expired posts every minute with their reactions, votes, RSVPs, kept marks and photo, each with a `post_expired` event. Rules by type: `body` is trimmed and 1–2000 characters; `mood` and `category` at most 40 characters; `location` at most 200; `latitude` (−90…90) and `longitude` (−180…180) come together. An `event` needs `starts_at`; an `ask` has an `urgency` (default `medium`); a `poll` needs 2–10 distinct options (case-insensitively) of 1–100 characters after trimming. Other types may not carry `starts_at`, `urgency` or `poll_options`. A photo is added afterwards with PUT /circles/v1/posts/{post_id}/photo. Goes out as a `post_created` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostCreate"}}}},
        "responses": {
          "201": {
            "description": "Created; the post as members see it.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/CircleNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "The post breaks its type's rules (`validation_failed`): an empty or over-long body, a mood or category over 40 or a location over 200 characters, latitude without longitude (or the reverse) or out of range, an event without `starts_at`, a poll without 2–10 distinct options of 1–100 characters, `starts_at`, `urgency` or `poll_options` on a type that does not take them, or a field missing or of the wrong type.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/posts/kept": {
      "get": {
        "operationId": "listKeptPosts",
        "tags": ["Posts"],
        "summary": "The posts the caller kept",
        "description": "The live posts the caller marked with PUT /circles/v1/posts/{post_id}/keep, in circles they are still in, most recently kept first. Kept posts still expire after 24 hours.",
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Post"}, "description": "Most recently kept first."}
              }
            }
          },
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/circles/v1/posts/{post_id}": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "get": {
        "operationId": "getPost",
        "tags": ["Posts"],
        "summary": "One post",
        "description": "Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. ",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      },
      "patch": {
        "operationId": "updatePost",
        "tags": ["Posts"],
        "summary": "Edit a post",
        "description": "Author only (403 `author_only` for other members). Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Only the fields sent change; `null` clears `mood`, `category`, `location`, `latitude` and `longitude`, and leaves `body`, `urgency` and `starts_at`. The type and the poll options cannot change (other fields are ignored), and `expires_at` stays. The edited post is checked by its type's rules as on creation. Goes out as a `post_updated` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostPatch"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/AuthorOnly"},
          "404": {"$ref": "#/components/responses/PostNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "The edited post breaks its type's rules (`validation_failed`): an empty or over-long body, a mood or category over 40 or a location over 200 characters, latitude without longitude or out of range, `starts_at` or `urgency` on a type that does not take them, or a field of the wrong type.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deletePost",
        "tags": ["Posts"],
        "summary": "Delete a post",
        "description": "Author only (403 `author_only` for other members). Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Deletes the post with its reactions, votes, RSVPs, kept marks and photo. Goes out as a `post_deleted` event.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/AuthorOnly"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      }
    },
    "/circles/v1/posts/{post_id}/photo": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "put": {
        "operationId": "setPostPhoto",
        "tags": ["Posts"],
        "summary": "Upload a post's photo",
        "description": "Author only (403 `author_only` for other members). Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Stores the photo in the private bucket `post-photos` as `{circle_id}/{post_id}`, replacing an earlier one. Photos are at most 5 MiB by default (`COLONY_CIRCLES_MAX_PHOTO_BYTES`). The post's `photo_url` is a signed, time-limited URL (1 hour by default, `COLONY_CIRCLES_PHOTO_URL_SECONDS`), made fresh with every read, so a photo is as private as its circle. The photo goes with its post. Goes out as a `post_updated` event.",
        "requestBody": {
          "required": true,
          "description": "The photo's bytes as the raw request body (not multipart), with its Content-Type `image/jpeg` or `image/png`; the bytes must match the declared type.",
          "content": {
            "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}}
          }
        },
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/AuthorOnly"},
          "404": {"$ref": "#/components/responses/PostNotFound"},
          "413": {
            "description": "The request body is over twice the photo limit (`payload_too_large`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      },
      "delete": {
        "operationId": "removePostPhoto",
        "tags": ["Posts"],
        "summary": "Remove a post's photo",
        "description": "Author only (403 `author_only` for other members). Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Deletes the stored photo (fine when there is none); `photo_url` is then left out. Goes out as a `post_updated` event.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/AuthorOnly"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      }
    },
    "/circles/v1/posts/{post_id}/reactions": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "post": {
        "operationId": "togglePostReaction",
        "tags": ["Posts"],
        "summary": "React to a post, or take the reaction back",
        "description": "Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Adds the caller's reaction with `emoji`; sending the same emoji again removes it (a caller may react with several different emoji). `emoji` is trimmed and must be an emoji: 1–8 characters, no letters or digits, at least one emoji character. Answers `{active}`: true when the reaction, vote or RSVP is now in place, false when the call removed it. Goes out as a `post_reacted` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmojiBody"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToggleResult"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`emoji` missing or not an emoji (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/posts/{post_id}/votes": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "post": {
        "operationId": "togglePollVote",
        "tags": ["Posts"],
        "summary": "Vote in a poll, move the vote, or withdraw it",
        "description": "Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Polls only. Each member has at most one vote per poll: voting for `option_id` casts the vote or moves it there; voting for the option already chosen withdraws it. Answers `{active}`: true when the reaction, vote or RSVP is now in place, false when the call removed it. Goes out as a `poll_voted` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/VoteBody"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToggleResult"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "The post is not a poll, `option_id` is not one of its options, or `option_id` missing or not a UUID (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/posts/{post_id}/rsvps": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "post": {
        "operationId": "toggleRSVP",
        "tags": ["Posts"],
        "summary": "RSVP to an event, change it, or withdraw it",
        "description": "Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Events only. Sets the caller's RSVP to `status`, or changes it; sending the status already set withdraws it. Answers `{active}`: true when the reaction, vote or RSVP is now in place, false when the call removed it. Goes out as an `event_rsvped` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RSVPBody"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToggleResult"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "The post is not an event, or `status` missing or not one of `going`, `maybe`, `declined` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/posts/{post_id}/keep": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "put": {
        "operationId": "keepPost",
        "tags": ["Posts"],
        "summary": "Keep a post",
        "description": "Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Marks the post as kept by the caller (idempotent), so it shows in GET /circles/v1/posts/kept; it still expires after 24 hours. No body needed.",
        "responses": {
          "200": {
            "description": "The post, with `kept_by_me` true.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      },
      "delete": {
        "operationId": "unkeepPost",
        "tags": ["Posts"],
        "summary": "Stop keeping a post",
        "description": "Only a live post in one of the caller's circles can be seen or touched: for anyone else, an expired post, or an unknown or malformed id it is 404 `post_not_found`. Removes the caller's kept mark (fine when there is none).",
        "responses": {
          "200": {
            "description": "The post, with `kept_by_me` false.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}
          },
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      }
    },
    "/circles/v1/dms": {
      "get": {
        "operationId": "listThreads",
        "tags": ["DMs"],
        "summary": "The caller's DM threads",
        "description": "Every thread the caller is a party of whose two parties still share its circle, most recently active first, each with the other party's public profile, the last message and the number of the other party's messages the caller has not read.",
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Thread"}, "description": "Most recently active first."}
              }
            }
          },
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/circles/v1/circles/{circle_id}/dms": {
      "parameters": [{"$ref": "#/components/parameters/CircleId"}],
      "post": {
        "operationId": "openThread",
        "tags": ["DMs"],
        "summary": "Open a DM thread with another member",
        "description": "Members only: for anyone not in the circle (or an unknown or malformed id) it is 404 `circle_not_found`, so outsiders learn nothing about what exists. Opens the caller's thread with `user_id`, a fellow member of this circle, or returns the existing one (one thread per pair and circle). Each recipient's `dm_privacy` decides: `anyone` accepts any fellow member; `reciprocal` only senders whose own `dm_privacy` is not `nobody`; `nobody` accepts no one (403 `dm_not_allowed`). The answer carries no `last_message` and an `unread_count` of 0; GET /circles/v1/dms has both.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThreadOpen"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thread"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/DMNotAllowed"},
          "404": {
            "description": "The caller is not in the circle or it does not exist (`circle_not_found`), `user_id` is not a member of it (`member_not_found`), or has no profile (`user_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`user_id` missing or not a UUID, or the caller's own id (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/dms/{thread_id}": {
      "parameters": [{"$ref": "#/components/parameters/ThreadId"}],
      "patch": {
        "operationId": "setThreadNotify",
        "tags": ["DMs"],
        "summary": "Turn push notifications for a thread on or off",
        "description": "Only the thread's two parties see it, and only while both are still members of its circle; otherwise (or for an unknown or malformed id) it is 404 `thread_not_found`. Sets whether the caller gets pushes for new messages in this thread (the other party's setting stays). The answer carries no `last_message` and an `unread_count` of 0.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotifyBody"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thread"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ThreadNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`notify` missing or not a boolean (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/dms/{thread_id}/messages": {
      "parameters": [{"$ref": "#/components/parameters/ThreadId"}],
      "get": {
        "operationId": "listMessages",
        "tags": ["DMs"],
        "summary": "A thread's messages",
        "description": "Only the thread's two parties see it, and only while both are still members of its circle; otherwise (or for an unknown or malformed id) it is 404 `thread_not_found`. Messages newest first, `limit` per page, each with its reactions. Pass a page's `next_cursor` as `before` for the next (older) page; `next_cursor` is absent on the last page.",
        "parameters": [
          {
            "name": "before",
            "in": "query",
            "description": "An opaque cursor: a page's `next_cursor`. Without it, the newest messages.",
            "schema": {"type": "string"}
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Messages per page.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MessagePage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ThreadNotFound"},
          "422": {
            "description": "`limit` not 1–200, or `before` not a cursor from an earlier page (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "sendMessage",
        "tags": ["DMs"],
        "summary": "Send a message",
        "description": "Only the thread's two parties see it, and only while both are still members of its circle; otherwise (or for an unknown or malformed id) it is 404 `thread_not_found`. The recipient's `dm_privacy` is checked on every send. Each recipient's `dm_privacy` decides: `anyone` accepts any fellow member; `reciprocal` only senders whose own `dm_privacy` is not `nobody`; `nobody` accepts no one (403 `dm_not_allowed`). `body` must not be blank and is at most 4000 characters (kept as sent); `reply_to_id` must be a message of this thread. Goes out as a `dm_sent` event (with whether the recipient wants a push).",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MessageCreate"}}}},
        "responses": {
          "201": {
            "description": "Created; the message (without reactions).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {"$ref": "#/components/responses/DMNotAllowed"},
          "404": {"$ref": "#/components/responses/ThreadNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`body` missing, blank or over 4000 characters, or `reply_to_id` not a message of this thread or not a UUID (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/circles/v1/dms/{thread_id}/read": {
      "parameters": [{"$ref": "#/components/parameters/ThreadId"}],
      "post": {
        "operationId": "markThreadRead",
        "tags": ["DMs"],
        "summary": "Mark a thread read",
        "description": "Only the thread's two parties see it, and only while both are still members of its circle; otherwise (or for an unknown or malformed id) it is 404 `thread_not_found`. Sets `read_at` to now on the other party's unread messages (read receipts); when there were any, a `dm_read` event names them. No body needed. The answer carries no `last_message` and an `unread_count` of 0.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thread"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ThreadNotFound"}
        }
      }
    },
    "/circles/v1/dms/{thread_id}/messages/{message_id}/reactions": {
      "parameters": [{"$ref": "#/components/parameters/ThreadId"}, {"$ref": "#/components/parameters/MessageId"}],
      "post": {
        "operationId": "toggleMessageReaction",
        "tags": ["DMs"],
        "summary": "React to a message, or take the reaction back",
        "description": "Only the thread's two parties see it, and only while both are still members of its circle; otherwise (or for an unknown or malformed id) it is 404 `thread_not_found`. Adds the caller's reaction with `emoji` to a message of this thread; sending the same emoji again removes it. `emoji` is trimmed and must be an emoji: 1–8 characters, no letters or digits, at least one emoji character. Answers `{active}`: true when the reaction, vote or RSVP is now in place, false when the call removed it.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmojiBody"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToggleResult"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "No such thread the caller may see (`thread_not_found`), or `message_id` is not a message of this thread or not a UUID (`message_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`emoji` missing or not an emoji (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A Colony access token of the mycirclee app."}
    },
    "parameters": {
      "CircleId": {
        "name": "circle_id",
        "in": "path",
        "required": true,
        "description": "A circle the caller is a member of. Any other circle (or a malformed id) is 404 `circle_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "MemberUserId": {
        "name": "user_id",
        "in": "path",
        "required": true,
        "description": "A member of the circle. Anyone else (or a malformed id) is 404 `member_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "RequestId": {
        "name": "request_id",
        "in": "path",
        "required": true,
        "description": "An add request. An unknown or malformed id, or one the caller may not see, is 404 `add_request_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "PostId": {
        "name": "post_id",
        "in": "path",
        "required": true,
        "description": "A live post in one of the caller's circles. Anything else (or a malformed id) is 404 `post_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "ThreadId": {
        "name": "thread_id",
        "in": "path",
        "required": true,
        "description": "A DM thread of the caller's. Anything else (or a malformed id) is 404 `thread_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "MessageId": {
        "name": "message_id",
        "in": "path",
        "required": true,
        "description": "A message of the thread. Anything else (or a malformed id) is 404 `message_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      }
    },
    "responses": {
      "MalformedJSON": {
        "description": "The body is not JSON (`malformed_json`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "Unauthorized": {
        "description": "Missing token (`unauthorized`), an invalid token or one of another app (`invalid_token`), an expired token (`token_expired`); or the account was deleted (`account_deleted`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "PayloadTooLarge": {
        "description": "The request body is over the service's limit (`payload_too_large`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "CircleNotFound": {
        "description": "No such circle the caller is a member of (`circle_not_found`): unknown, malformed, or a circle the caller is not in — indistinguishable.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "PostNotFound": {
        "description": "No such live post the caller may see (`post_not_found`): unknown, malformed, expired, or in a circle the caller is not in — indistinguishable.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "ThreadNotFound": {
        "description": "No such thread of the caller's (`thread_not_found`): unknown, malformed, someone else's, or one whose parties no longer share the circle.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "OwnerOnly": {
        "description": "Only the circle's owner can do that (`owner_only`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "AuthorOnly": {
        "description": "Only the post's author can do that (`author_only`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "DMNotAllowed": {
        "description": "The recipient's `dm_privacy` does not accept messages from the caller (`dm_not_allowed`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "UploadRejected": {
        "description": "A missing, unsupported or mismatched Content-Type (`unsupported_media_type`; JPEG or PNG only), a file over the photo limit (`file_too_large`), or an empty body (`empty_file`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
          "code": {"type": "string", "description": "Stable machine-readable code, e.g. `circle_not_found`."},
          "message": {"type": "string", "description": "For people; may change."}
        }
      },
      "OpenAPIDocument": {
        "type": "object",
        "description": "This document.",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}
      },
      "CircleRole": {
        "type": "string",
        "enum": ["owner", "member"],
        "description": "`owner`: the circle's one owner (renames, deletes, removes members, answers add requests); `member`: everyone else."
      },
      "PostType": {"type": "string", "enum": ["note", "event", "ask", "poll"]},
      "AskUrgency": {"type": "string", "enum": ["low", "medium", "high", "urgent"]},
      "RSVPStatus": {"type": "string", "enum": ["going", "maybe", "declined"]},
      "DMPrivacy": {
        "type": "string",
        "enum": ["anyone", "reciprocal", "nobody"],
        "description": "Who may DM this person: `anyone` in a shared circle; `reciprocal`, only people whose own `dm_privacy` is not `nobody`; `nobody`."
      },
      "PresenceStatus": {"type": "string", "enum": ["free", "deep_work", "out", "still_up", "asleep"]},
      "MyProfile": {
        "type": "object",
        "description": "The caller's own profile, private fields included. Fields without a value are left out.",
        "required": ["user_id", "display_name", "handle", "dm_privacy", "is_pro", "created_at", "updated_at"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid"},
          "display_name": {"type": "string", "maxLength": 60},
          "handle": {"type": "string", "pattern": "^[a-z0-9_.]{3,30}$", "description": "Unique; lowercase."},
          "bio": {"type": "string", "maxLength": 300},
          "dm_privacy": {"$ref": "#/components/schemas/DMPrivacy"},
          "is_pro": {"type": "boolean"},
          "full_name": {"type": "string", "maxLength": 100},
          "location": {"type": "string", "maxLength": 100, "description": "Free text (a city, say)."},
          "address": {"type": "string", "maxLength": 300, "description": "Private: its owner only."},
          "email": {"type": "string", "description": "Private: its owner only; from the account."},
          "phone": {"type": "string", "maxLength": 32, "description": "Private: its owner only."},
          "birthday": {"type": "string", "format": "date", "description": "`YYYY-MM-DD`. Private: its owner only."},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "PublicProfile": {
        "type": "object",
        "description": "What fellow members see of a profile: never address, phone, email or birthday. Fields without a value are left out.",
        "required": ["user_id", "display_name", "handle", "dm_privacy", "is_pro"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid"},
          "display_name": {"type": "string"},
          "handle": {"type": "string"},
          "bio": {"type": "string"},
          "dm_privacy": {"$ref": "#/components/schemas/DMPrivacy"},
          "is_pro": {"type": "boolean"},
          "full_name": {"type": "string"},
          "location": {"type": "string"}
        }
      },
      "ProfilePatch": {
        "type": "object",
        "description": "Absent fields are left as they are; null (or blank) clears `bio`, `full_name`, `location`, `address`, `phone`; null clears `birthday`.",
        "properties": {
          "display_name": {"type": "string", "minLength": 1, "maxLength": 60, "description": "Trimmed; 1–60 characters."},
          "handle": {"type": "string", "description": "Trimmed, lowercased, a leading `@` dropped; then 3–30 of a-z, 0-9, `_` and `.`; unique."},
          "bio": {"type": ["string", "null"], "maxLength": 300, "description": "Trimmed; at most 300 characters; null or blank clears it."},
          "dm_privacy": {"$ref": "#/components/schemas/DMPrivacy"},
          "full_name": {"type": ["string", "null"], "maxLength": 100, "description": "Trimmed; at most 100 characters; null or blank clears it."},
          "location": {"type": ["string", "null"], "maxLength": 100, "description": "Trimmed; at most 100 characters; null or blank clears it."},
          "address": {"type": ["string", "null"], "maxLength": 300, "description": "Trimmed; at most 300 characters; null or blank clears it."},
          "phone": {"type": ["string", "null"], "maxLength": 32, "description": "Trimmed; at most 32 characters; null or blank clears it."},
          "birthday": {"type": ["string", "null"], "format": "date", "description": "`YYYY-MM-DD`, in the past and not before 1900; null clears it."}
        }
      },
      "Circle": {
        "type": "object",
        "description": "A circle as one of its members sees it.",
        "required": ["id", "name", "created_by", "created_at", "role", "member_count"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "name": {"type": "string", "minLength": 1, "maxLength": 60},
          "created_by": {"type": "string", "format": "uuid", "description": "Who created the circle (the owner may since have changed)."},
          "created_at": {"type": "string", "format": "date-time"},
          "role": {"$ref": "#/components/schemas/CircleRole", "description": "The caller's role."},
          "member_count": {"type": "integer", "minimum": 1}
        }
      },
      "CircleName": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "description": "Trimmed; 1–60 characters."}}},
      "Member": {
        "type": "object",
        "required": ["circle_id", "role", "joined_at", "profile"],
        "properties": {
          "circle_id": {"type": "string", "format": "uuid"},
          "role": {"$ref": "#/components/schemas/CircleRole"},
          "joined_at": {"type": "string", "format": "date-time"},
          "profile": {"$ref": "#/components/schemas/PublicProfile"}
        }
      },
      "Invite": {
        "type": "object",
        "description": "A single-use invite code, valid 48 hours.",
        "required": ["code", "circle_id", "expires_at"],
        "properties": {
          "code": {"type": "string", "pattern": "^[A-HJ-NP-Z2-9]{10}$", "description": "10 characters of A–Z (without I and O) and 2–9."},
          "circle_id": {"type": "string", "format": "uuid"},
          "expires_at": {"type": "string", "format": "date-time", "description": "48 hours after the code was made."}
        }
      },
      "InviteClaim": {
        "type": "object",
        "required": ["code"],
        "properties": {"code": {"type": "string", "description": "An invite code; trimmed, case does not matter."}}
      },
      "AddRequest": {
        "type": "object",
        "description": "A member's request to add someone to a circle, answered by the owner or the invitee.",
        "required": ["id", "circle_id", "circle_name", "from_user_id", "to_user_id", "to_handle", "status", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "circle_id": {"type": "string", "format": "uuid"},
          "circle_name": {"type": "string"},
          "from_user_id": {"type": "string", "format": "uuid", "description": "The member who asked."},
          "to_user_id": {"type": "string", "format": "uuid", "description": "The invitee."},
          "to_handle": {"type": "string", "description": "The invitee's handle."},
          "status": {"type": "string", "enum": ["pending", "accepted", "declined"]},
          "created_at": {"type": "string", "format": "date-time"}
        }
      },
      "AddRequestCreate": {
        "type": "object",
        "required": ["handle"],
        "properties": {"handle": {"type": "string", "description": "The invitee's handle; trimmed, case does not matter, a leading `@` is dropped."}}
      },
      "Presence": {
        "type": "object",
        "required": ["user_id", "circle_id", "status", "updated_at"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid"},
          "circle_id": {"type": "string", "format": "uuid"},
          "status": {"$ref": "#/components/schemas/PresenceStatus"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "PresenceUpdate": {"type": "object", "required": ["status"], "properties": {"status": {"$ref": "#/components/schemas/PresenceStatus"}}},
      "PostAuthor": {
        "type": "object",
        "required": ["user_id", "display_name", "handle"],
        "properties": {"user_id": {"type": "string", "format": "uuid"}, "display_name": {"type": "string"}, "handle": {"type": "string"}}
      },
      "PostReaction": {
        "type": "object",
        "required": ["emoji", "count", "reacted_by_me"],
        "properties": {"emoji": {"type": "string"}, "count": {"type": "integer", "minimum": 1}, "reacted_by_me": {"type": "boolean"}}
      },
      "PollOption": {
        "type": "object",
        "required": ["id", "label", "votes", "voted_by_me"],
        "properties": {
          "id": {"type": "string", "format": "uuid", "description": "Pass as `option_id` to vote."},
          "label": {"type": "string", "minLength": 1, "maxLength": 100},
          "votes": {"type": "integer", "minimum": 0},
          "voted_by_me": {"type": "boolean"}
        }
      },
      "RSVPSummary": {
        "type": "object",
        "required": ["going", "maybe", "declined"],
        "properties": {
          "going": {"type": "integer", "minimum": 0},
          "maybe": {"type": "integer", "minimum": 0},
          "declined": {"type": "integer", "minimum": 0},
          "mine": {"$ref": "#/components/schemas/RSVPStatus", "description": "The caller's RSVP; absent when they have none."}
        }
      },
      "Post": {
        "type": "object",
        "description": "A live post with its author, reactions, poll, RSVPs and whether the caller kept it. Fields without a value are left out.",
        "required": ["id", "circle_id", "author_id", "author", "type", "body", "expires_at", "created_at", "updated_at", "reactions", "kept_by_me"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "circle_id": {"type": "string", "format": "uuid"},
          "author_id": {"type": "string", "format": "uuid"},
          "author": {"$ref": "#/components/schemas/PostAuthor"},
          "type": {"$ref": "#/components/schemas/PostType"},
          "body": {"type": "string", "minLength": 1, "maxLength": 2000},
          "mood": {"type": "string", "maxLength": 40},
          "category": {"type": "string", "maxLength": 40},
          "urgency": {"$ref": "#/components/schemas/AskUrgency", "description": "Asks only."},
          "location": {"type": "string", "maxLength": 200},
          "latitude": {"type": "number", "minimum": -90, "maximum": 90},
          "longitude": {"type": "number", "minimum": -180, "maximum": 180},
          "starts_at": {"type": "string", "format": "date-time", "description": "Events only."},
          "photo_url": {
            "type": "string",
            "description": "A signed, time-limited URL of the photo (1 hour by default), made fresh with every read; absent when there is no photo."
          },
          "expires_at": {"type": "string", "format": "date-time", "description": "24 hours after creation; the post is gone after it."},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"},
          "reactions": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/PostReaction"},
            "description": "One entry per emoji, most used first."
          },
          "poll_options": {"type": "array", "items": {"$ref": "#/components/schemas/PollOption"}, "description": "Polls only, in their order."},
          "rsvps": {"$ref": "#/components/schemas/RSVPSummary", "description": "Events only."},
          "kept_by_me": {"type": "boolean"}
        }
      },
      "FeedPage": {
        "type": "object",
        "required": ["posts"],
        "properties": {
          "posts": {"type": "array", "items": {"$ref": "#/components/schemas/Post"}, "description": "Newest first."},
          "next_cursor": {"type": "string", "description": "Pass as `before` for the next (older) page; absent on the last page."}
        }
      },
      "PostCreate": {
        "type": "object",
        "description": "A new post; the fields a type does not take must be left out.",
        "required": ["type", "body"],
        "properties": {
          "type": {"$ref": "#/components/schemas/PostType"},
          "body": {"type": "string", "description": "Trimmed; 1–2000 characters."},
          "mood": {"type": "string", "maxLength": 40},
          "category": {"type": "string", "maxLength": 40},
          "urgency": {"$ref": "#/components/schemas/AskUrgency", "description": "Asks only; default `medium`."},
          "location": {"type": "string", "maxLength": 200},
          "latitude": {"type": "number", "minimum": -90, "maximum": 90, "description": "With `longitude`."},
          "longitude": {"type": "number", "minimum": -180, "maximum": 180, "description": "With `latitude`."},
          "starts_at": {"type": "string", "format": "date-time", "description": "Events only, and required for them."},
          "poll_options": {
            "type": "array",
            "minItems": 2,
            "maxItems": 10,
            "items": {"type": "string", "minLength": 1, "maxLength": 100},
            "description": "Polls only, and required for them: 2–10 distinct (case-insensitively) labels of 1–100 characters after trimming."
          }
        }
      },
      "PostPatch": {
        "type": "object",
        "description": "Absent fields are left as they are; null clears `mood`, `category`, `location`, `latitude` and `longitude`. The type and poll options cannot be changed.",
        "properties": {
          "body": {"type": "string", "description": "Trimmed; 1–2000 characters."},
          "mood": {"type": ["string", "null"], "maxLength": 40, "description": "At most 40 characters; null clears it."},
          "category": {"type": ["string", "null"], "maxLength": 40, "description": "At most 40 characters; null clears it."},
          "urgency": {"$ref": "#/components/schemas/AskUrgency", "description": "Asks only."},
          "location": {"type": ["string", "null"], "maxLength": 200, "description": "At most 200 characters; null clears it."},
          "latitude": {"type": ["number", "null"], "minimum": -90, "maximum": 90, "description": "−90…90, with `longitude`; null clears it."},
          "longitude": {"type": ["number", "null"], "minimum": -180, "maximum": 180, "description": "−180…180, with `latitude`; null clears it."},
          "starts_at": {"type": "string", "format": "date-time", "description": "Events only."}
        }
      },
      "EmojiBody": {
        "type": "object",
        "required": ["emoji"],
        "properties": {"emoji": {"type": "string", "description": "An emoji: 1–8 characters, no letters or digits."}}
      },
      "VoteBody": {
        "type": "object",
        "required": ["option_id"],
        "properties": {"option_id": {"type": "string", "format": "uuid", "description": "One of the poll's options (`poll_options[].id`)."}}
      },
      "RSVPBody": {"type": "object", "required": ["status"], "properties": {"status": {"$ref": "#/components/schemas/RSVPStatus"}}},
      "ToggleResult": {
        "type": "object",
        "required": ["active"],
        "properties": {
          "active": {"type": "boolean", "description": "Whether the reaction, vote or RSVP is now in place (false: the call removed it)."}
        }
      },
      "Message": {
        "type": "object",
        "description": "A direct message. Fields without a value are left out.",
        "required": ["id", "thread_id", "sender_id", "body", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "thread_id": {"type": "string", "format": "uuid"},
          "sender_id": {"type": "string", "format": "uuid"},
          "body": {"type": "string", "minLength": 1, "maxLength": 4000},
          "reply_to_id": {"type": "string", "format": "uuid", "description": "The message this one answers."},
          "created_at": {"type": "string", "format": "date-time"},
          "read_at": {"type": "string", "format": "date-time", "description": "When the recipient read it; absent until then."}
        }
      },
      "MessageReaction": {
        "type": "object",
        "required": ["emoji", "user_id"],
        "properties": {"emoji": {"type": "string"}, "user_id": {"type": "string", "format": "uuid"}}
      },
      "MessageWithReactions": {
        "description": "A direct message with its reactions.",
        "allOf": [
          {"$ref": "#/components/schemas/Message"},
          {
            "type": "object",
            "required": ["reactions"],
            "properties": {"reactions": {"type": "array", "items": {"$ref": "#/components/schemas/MessageReaction"}, "description": "Oldest first."}}
          }
        ]
      },
      "MessagePage": {
        "type": "object",
        "required": ["messages"],
        "properties": {
          "messages": {"type": "array", "items": {"$ref": "#/components/schemas/MessageWithReactions"}, "description": "Newest first."},
          "next_cursor": {"type": "string", "description": "Pass as `before` for the next (older) page; absent on the last page."}
        }
      },
      "MessageCreate": {
        "type": "object",
        "required": ["body"],
        "properties": {
          "body": {"type": "string", "description": "Not blank; at most 4000 characters."},
          "reply_to_id": {"type": "string", "format": "uuid", "description": "A message of this thread to answer."}
        }
      },
      "Thread": {
        "type": "object",
        "description": "A DM thread between the caller and another member of a circle. Fields without a value are left out.",
        "required": ["id", "circle_id", "other_user", "unread_count", "notify"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "circle_id": {"type": "string", "format": "uuid"},
          "other_user": {"$ref": "#/components/schemas/PublicProfile", "description": "The other party."},
          "last_message": {
            "$ref": "#/components/schemas/Message",
            "description": "The latest message (in GET /circles/v1/dms only; absent when there is none)."
          },
          "last_message_at": {"type": "string", "format": "date-time", "description": "Absent before the first message."},
          "unread_count": {
            "type": "integer",
            "minimum": 0,
            "description": "The other party's messages the caller has not read (GET /circles/v1/dms; 0 elsewhere)."
          },
          "notify": {"type": "boolean", "description": "Whether the caller gets pushes for this thread."}
        }
      },
      "ThreadOpen": {
        "type": "object",
        "required": ["user_id"],
        "properties": {"user_id": {"type": "string", "format": "uuid", "description": "Another member of the circle."}}
      },
      "NotifyBody": {"type": "object", "required": ["notify"], "properties": {"notify": {"type": "boolean"}}}
    }
  }
}
"""#
}
