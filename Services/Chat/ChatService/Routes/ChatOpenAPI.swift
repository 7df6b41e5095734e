/// The chat service's OpenAPI 3.1 document, served at GET /chat/v1/openapi.json and checked
/// against the registered routes by the tests.
enum ChatOpenAPI {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Colony chat service (Unify)",
    "version": "1.0.0",
    "description": "Unify's profiles, groups, members, messages (text and voice), unread counts and calendar events. Only access tokens of the unify app are accepted. All times are ISO 8601 in UTC with milliseconds; ids are UUIDs. JSON keys are snake_case; optional fields without a value are left out. A group the caller is not a member of does not exist for them: everything about it is 404 `group_not_found`. Roles: `owner` (one per group), `admin`, `user`. Pictures and voice recordings are uploaded as raw request bodies with their Content-Type (not multipart) and served by the storage routes under /storage/v1: pictures from the public buckets `profile-pictures` and `group-pictures` (URLs with `?v=<version>`), voice messages from the private bucket `voice-messages` through time-limited signed URLs. Changes reach other members through the realtime service. Errors are `{code, message}`, sometimes with further keys."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "tags": [
    {"name": "Meta"},
    {"name": "Me", "description": "The caller's profile."},
    {"name": "Groups"},
    {"name": "Members"},
    {"name": "Messages"},
    {"name": "Events", "description": "Calendar events, personal or of a group."}
  ],
  "paths": {
    "/chat/v1/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "tags": ["Meta"],
        "summary": "This OpenAPI document",
        "description": "Public: no token needed.",
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenAPIDocument"}}}}},
        "security": []
      }
    },
    "/chat/v1/me": {
      "get": {
        "operationId": "getMe",
        "tags": ["Me"],
        "summary": "The caller's profile",
        "description": "Created on first use from the token if auth's registration event has not arrived yet (display name: the email's local part). `email` is shown to its owner only.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "patch": {
        "operationId": "updateMe",
        "tags": ["Me"],
        "summary": "Rename the caller",
        "description": "Sets the caller's display name (trimmed, 1–60 characters), shown to the members of their groups.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProfileUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`display_name` missing, of the wrong type, or not 1–60 characters after trimming (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/me/avatar": {
      "put": {
        "operationId": "setAvatar",
        "tags": ["Me"],
        "summary": "Upload the caller's profile picture",
        "description": "The caller only. Stores the picture as `{user_id}` in the public bucket `profile-pictures`, replacing the old one; the answer's `avatar_url` carries `?v=<version>`, so caches refresh. Pictures are at most 5 MiB by default (`COLONY_CHAT_MAX_IMAGE_BYTES`).",
        "requestBody": {
          "required": true,
          "description": "The picture's bytes as the raw request body (not multipart), with its Content-Type; the bytes must match the declared type.",
          "content": {
            "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}}
          }
        },
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      },
      "delete": {
        "operationId": "removeAvatar",
        "tags": ["Me"],
        "summary": "Remove the caller's profile picture",
        "description": "The caller only. Deletes the stored picture (fine when there is none); `avatar_url` is then left out.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/chat/v1/groups": {
      "get": {
        "operationId": "listGroups",
        "tags": ["Groups"],
        "summary": "The caller's groups",
        "description": "Every group the caller is a member of, with the caller's role, `last_read_at`, `unread_count` and `last_message_at` (left out while the group has no messages); most recently active first (last message, else creation).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GroupList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "post": {
        "operationId": "createGroup",
        "tags": ["Groups"],
        "summary": "Create a group",
        "description": "Any user. The caller becomes the owner; `member_emails` (optional) adds Unify users as members with role `user`, all or none: if any address has no Unify account nothing is created and the answer is 422 `unknown_emails` listing them. The caller's own address and duplicates (case-insensitive) are ignored.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GroupCreate"}}}},
        "responses": {
          "201": {
            "description": "Created; `unread_count` is 0.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/EmailsRejected"}
        }
      }
    },
    "/chat/v1/groups/unread": {
      "get": {
        "operationId": "listUnreadCounts",
        "tags": ["Groups"],
        "summary": "Unread counts of all the caller's groups",
        "description": "One entry per group the caller is a member of (ordered by group id): the messages sent after the caller's `last_read_at` by other members.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UnreadCountList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/chat/v1/groups/{group_id}": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "get": {
        "operationId": "getGroup",
        "tags": ["Groups"],
        "summary": "One group",
        "description": "Members only; the caller's role and `last_read_at` are included (`unread_count` is not: see GET /chat/v1/groups/unread).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"}
        }
      },
      "patch": {
        "operationId": "renameGroup",
        "tags": ["Groups"],
        "summary": "Rename a group",
        "description": "The owner only. The name is trimmed and must be 1–100 characters.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GroupRename"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is not the group's owner (`not_group_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`name` missing, of the wrong type, or not 1–100 characters after trimming (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteGroup",
        "tags": ["Groups"],
        "summary": "Delete a group",
        "description": "The owner only. Deletes the group with its members, messages (and their voice files), calendar events and picture.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is not the group's owner (`not_group_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/GroupNotFound"}
        }
      }
    },
    "/chat/v1/groups/{group_id}/picture": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "put": {
        "operationId": "setGroupPicture",
        "tags": ["Groups"],
        "summary": "Upload the group's picture",
        "description": "The owner or an admin. Stores the picture as `{group_id}` in the public bucket `group-pictures`, replacing the old one; the answer's `picture_url` carries `?v=<version>`, so caches refresh. Pictures are at most 5 MiB by default (`COLONY_CHAT_MAX_IMAGE_BYTES`).",
        "requestBody": {
          "required": true,
          "description": "The picture's bytes as the raw request body (not multipart), with its Content-Type; the bytes must match the declared type.",
          "content": {
            "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}}
          }
        },
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is a plain user of the group (`not_group_admin`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      },
      "delete": {
        "operationId": "removeGroupPicture",
        "tags": ["Groups"],
        "summary": "Remove the group's picture",
        "description": "The owner or an admin. Deletes the stored picture (fine when there is none); `picture_url` is then left out.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is a plain user of the group (`not_group_admin`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/GroupNotFound"}
        }
      }
    },
    "/chat/v1/groups/{group_id}/read": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "post": {
        "operationId": "markGroupRead",
        "tags": ["Groups"],
        "summary": "Mark the group read",
        "description": "Any member, for themselves. Moves the caller's `last_read_at` to `at` (default: now); it never moves backwards, so a stale call from another device keeps the later time. An empty body is allowed.",
        "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MarkReadRequest"}}}},
        "responses": {
          "200": {
            "description": "OK; the group with the caller's new `last_read_at`.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`at` is not an ISO 8601 time (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/groups/{group_id}/leave": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "post": {
        "operationId": "leaveGroup",
        "tags": ["Groups"],
        "summary": "Leave a group",
        "description": "Any member. The owner must name a successor (`successor_id`, another member), who becomes the owner first; the owner may instead delete the group. An empty body is allowed for members who are not the owner.",
        "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LeaveRequest"}}}},
        "responses": {
          "204": {"description": "Done; no body."},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "409": {
            "description": "The caller is the owner and named no successor (`cannot_leave_as_owner_without_successor`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`successor_id` is not another member of the group (`invalid_successor`), or is not a UUID (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/groups/{group_id}/transfer": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "post": {
        "operationId": "transferGroupOwnership",
        "tags": ["Groups"],
        "summary": "Transfer ownership",
        "description": "The owner only. Makes another member the owner; the old owner stays in the group as an admin.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OwnershipTransfer"}}}},
        "responses": {
          "200": {
            "description": "OK; the group as the caller now sees it (role `admin`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Group"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is not the group's owner (`not_group_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`new_owner_id` is not another member of the group (`invalid_successor`), or is missing or not a UUID (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/groups/{group_id}/members": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "get": {
        "operationId": "listMembers",
        "tags": ["Members"],
        "summary": "The group's members",
        "description": "Members only. With each member's public profile; the owner first, then admins, then users, each by joining time.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MemberList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"}
        }
      },
      "post": {
        "operationId": "addMembers",
        "tags": ["Members"],
        "summary": "Add members by email",
        "description": "The owner or an admin. Adds Unify users with role `user`, all or none: if any address has no Unify account nobody is added and the answer is 422 `unknown_emails` listing them. Duplicates (case-insensitive) and people already in the group are skipped; `added` lists those newly added.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MembersAdd"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AddMembersResult"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is a plain user of the group (`not_group_admin`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/EmailsRejected"}
        }
      }
    },
    "/chat/v1/groups/{group_id}/members/{user_id}": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}, {"$ref": "#/components/parameters/UserId"}],
      "patch": {
        "operationId": "setMemberRole",
        "tags": ["Members"],
        "summary": "Change a member's role",
        "description": "The owner only. Promotes a user to `admin` or demotes an admin to `user`; the owner's role changes only by transferring ownership.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RoleChange"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Member"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller is not the group's owner (`not_group_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "The caller is not a member (`group_not_found`), or `user_id` is not a member (`member_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The role asked for is `owner`, or the member is the owner (`owner_role_fixed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`role` missing or not a role (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "removeMember",
        "tags": ["Members"],
        "summary": "Remove a member",
        "description": "The owner removes anyone else; an admin removes users (not admins or the owner). To remove yourself, use POST /chat/v1/groups/{group_id}/leave.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller may not remove this member: a plain user, or an admin removing an admin or the owner (`cannot_remove_member`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "The caller is not a member (`group_not_found`), or `user_id` is not a member (`member_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`user_id` is the caller (`validation_failed`): leave instead.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/groups/{group_id}/messages": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "get": {
        "operationId": "listMessages",
        "tags": ["Messages"],
        "summary": "A page of the group's history",
        "description": "Members only. Without a cursor: the latest `limit` messages. With `before`: the page older than that cursor; with `after`: the messages newer than it (poll with the last page's `newer_cursor` for new ones). Within a page messages come oldest first; `has_more` says whether more lie beyond the page in the direction read.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "description": "Messages per page.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
          },
          {
            "name": "before",
            "in": "query",
            "description": "An opaque cursor (a page's `older_cursor`, or a message's `cursor`): read older messages. Not with `after`.",
            "schema": {"type": "string"}
          },
          {
            "name": "after",
            "in": "query",
            "description": "An opaque cursor (a page's `newer_cursor`, or a message's `cursor`): read newer messages. Not with `before`.",
            "schema": {"type": "string"}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HistoryPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "422": {
            "description": "`limit` out of range, both `before` and `after`, or a cursor that did not come from a page (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "sendTextMessage",
        "tags": ["Messages"],
        "summary": "Send a text message",
        "description": "Any member. `content` must not be blank and is at most 4000 characters (kept as written).",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TextMessage"}}}},
        "responses": {
          "201": {"description": "Created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`content` missing, blank or longer than 4000 characters (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/groups/{group_id}/messages/voice": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}],
      "post": {
        "operationId": "sendVoiceMessage",
        "tags": ["Messages"],
        "summary": "Send a voice message",
        "description": "Any member. The recording is the raw request body; it is stored in the private bucket `voice-messages` as `{group_id}/{message_id}`, and the message's `voice_url` is a time-limited signed URL (1 hour by default, `COLONY_CHAT_VOICE_URL_SECONDS`), handed out fresh with every read. Recordings are at most 10 MiB by default (`COLONY_CHAT_MAX_VOICE_BYTES`).",
        "parameters": [
          {
            "name": "duration",
            "in": "query",
            "required": true,
            "description": "The recording's length in seconds: more than 0, at most 600 (the default `COLONY_CHAT_MAX_VOICE_SECONDS`).",
            "schema": {"type": "number", "exclusiveMinimum": 0, "maximum": 600}
          },
          {
            "name": "content",
            "in": "query",
            "description": "An optional caption (at most 4000 characters); default empty.",
            "schema": {"type": "string", "maxLength": 4000}
          }
        ],
        "requestBody": {
          "required": true,
          "description": "The recording's bytes as the raw request body (not multipart), with its Content-Type: `audio/mp4` (m4a), `audio/mpeg`, `audio/aac`, `audio/wav`, `audio/ogg` or `audio/webm`.",
          "content": {
            "audio/mp4": {"schema": {"type": "string", "format": "binary"}},
            "audio/mpeg": {"schema": {"type": "string", "format": "binary"}},
            "audio/aac": {"schema": {"type": "string", "format": "binary"}},
            "audio/wav": {"schema": {"type": "string", "format": "binary"}},
            "audio/ogg": {"schema": {"type": "string", "format": "binary"}},
            "audio/webm": {"schema": {"type": "string", "format": "binary"}}
          }
        },
        "responses": {
          "201": {"description": "Created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/GroupNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`duration` missing, not a number or out of range, or a caption longer than 4000 characters (`validation_failed`); a missing, unsupported or mismatched Content-Type (`unsupported_media_type`); a file over the limit (`file_too_large`); an empty body (`empty_file`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/groups/{group_id}/messages/{message_id}": {
      "parameters": [{"$ref": "#/components/parameters/GroupId"}, {"$ref": "#/components/parameters/MessageId"}],
      "patch": {
        "operationId": "editMessage",
        "tags": ["Messages"],
        "summary": "Edit a text message",
        "description": "The message's sender only (text messages only). Replaces `content` and sets `is_edited`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TextMessage"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The message is someone else's (`not_your_message`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "The caller is not a member (`group_not_found`), or no such message in the group (`message_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "Voice messages cannot be edited (`voice_not_editable`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`content` missing, blank or longer than 4000 characters (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteMessage",
        "tags": ["Messages"],
        "summary": "Delete a message",
        "description": "The message's sender, or the group's owner or an admin for any message. A voice message's file is deleted with it.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "A plain user deleting someone else's message (`not_your_message`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "The caller is not a member (`group_not_found`), or no such message in the group (`message_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/events": {
      "get": {
        "operationId": "listEvents",
        "tags": ["Events"],
        "summary": "Calendar events in a time range",
        "description": "The caller's personal events and the events of the caller's groups (or of one group, with `group_id`) that overlap [from, to), by start time; at most 1000.",
        "parameters": [
          {
            "name": "from",
            "in": "query",
            "required": true,
            "description": "Start of the range (inclusive).",
            "schema": {"type": "string", "format": "date-time"}
          },
          {
            "name": "to",
            "in": "query",
            "required": true,
            "description": "End of the range (exclusive); after `from`, at most 400 days later.",
            "schema": {"type": "string", "format": "date-time"}
          },
          {
            "name": "group_id",
            "in": "query",
            "description": "Only this group's events (the caller must be a member).",
            "schema": {"type": "string", "format": "uuid"}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "`group_id` names a group the caller is not a member of (`group_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`from` or `to` missing or not ISO 8601, `to` not after `from`, a range over 400 days, or `group_id` not a UUID (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createEvent",
        "tags": ["Events"],
        "summary": "Create a calendar event",
        "description": "Any user: a personal event (no `group_id`, visible to its creator only), or, by any member, an event of one of the caller's groups (visible to its members).",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventCreate"}}}},
        "responses": {
          "201": {"description": "Created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CalendarEvent"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "`group_id` names a group the caller is not a member of (`group_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Missing or invalid fields: title not 1–200 characters after trimming, details over 4000 characters, `ends_at` before `starts_at` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/chat/v1/events/{event_id}": {
      "parameters": [{"$ref": "#/components/parameters/EventId"}],
      "get": {
        "operationId": "getEvent",
        "tags": ["Events"],
        "summary": "One calendar event",
        "description": "Visible to its creator (personal events) or to the group's members (group events).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CalendarEvent"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/EventNotFound"}
        }
      },
      "patch": {
        "operationId": "updateEvent",
        "tags": ["Events"],
        "summary": "Update a calendar event",
        "description": "A personal event: its creator. A group event: its creator, or the group's owner or an admin. Only the fields sent change; `details: null` clears the details. The result is validated as a whole, as on create.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CalendarEvent"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller sees the event but may not change it (`not_event_manager`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/EventNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Invalid fields: title not 1–200 characters after trimming, details over 4000 characters, `ends_at` before `starts_at` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteEvent",
        "tags": ["Events"],
        "summary": "Delete a calendar event",
        "description": "A personal event: its creator. A group event: its creator, or the group's owner or an admin.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The caller sees the event but may not delete it (`not_event_manager`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/EventNotFound"}
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A Colony access token of the unify app."}
    },
    "parameters": {
      "GroupId": {
        "name": "group_id",
        "in": "path",
        "required": true,
        "description": "The group's id. A group the caller is not a member of (or a malformed id) is 404 `group_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "UserId": {
        "name": "user_id",
        "in": "path",
        "required": true,
        "description": "The member's user id; not a member (or a malformed id) is 404 `member_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "MessageId": {
        "name": "message_id",
        "in": "path",
        "required": true,
        "description": "The message's id; none in this group (or a malformed id) is 404 `message_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "EventId": {
        "name": "event_id",
        "in": "path",
        "required": true,
        "description": "The event's id; one the caller cannot see (or a malformed id) is 404 `event_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      }
    },
    "responses": {
      "MalformedJSON": {
        "description": "The body is not JSON (`malformed_json`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "Unauthorized": {
        "description": "Missing, invalid or expired token, or a token of another app (`unauthorized`); or the account was deleted (`account_deleted`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "PayloadTooLarge": {
        "description": "The request body is over the service's limit (`payload_too_large`): twice the largest upload limit.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "GroupNotFound": {
        "description": "No such group, or the caller is not a member (`group_not_found`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "EventNotFound": {
        "description": "No such event, or the caller cannot see it (`event_not_found`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "UploadRejected": {
        "description": "A missing, unsupported or mismatched Content-Type (`unsupported_media_type`; JPEG or PNG only), a file over the limit (`file_too_large`), or an empty body (`empty_file`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "EmailsRejected": {
        "description": "Invalid fields (`validation_failed`: a group name not 1–100 characters after trimming, a malformed address, more than 100 addresses, or none when adding members); or addresses with no Unify account (`unknown_emails`, with `unknown_emails` listing them). Nothing is changed.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailsError"}}}
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
          "code": {"type": "string", "description": "Stable machine-readable code, e.g. `group_not_found`."},
          "message": {"type": "string", "description": "For people; may change."}
        },
        "additionalProperties": true,
        "description": "Some errors add further keys beside `code` and `message` (e.g. `unknown_emails`)."
      },
      "EmailsError": {
        "allOf": [
          {"$ref": "#/components/schemas/Error"},
          {
            "type": "object",
            "properties": {
              "unknown_emails": {
                "type": "array",
                "items": {"type": "string"},
                "description": "With code `unknown_emails`: the addresses (trimmed) that have no Unify account."
              }
            }
          }
        ]
      },
      "OpenAPIDocument": {
        "type": "object",
        "description": "This document.",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}
      },
      "GroupRole": {
        "type": "string",
        "enum": ["owner", "admin", "user"],
        "description": "`owner` (one per group): everything, and alone renames, deletes, changes roles and transfers ownership; `admin`: also adds and removes users, changes the picture, deletes any message and manages any group event; `user`: reads, sends, edits and deletes own messages, creates events."
      },
      "MessageType": {"type": "string", "enum": ["text", "voice"]},
      "User": {
        "type": "object",
        "required": ["id", "display_name", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "display_name": {"type": "string"},
          "email": {"type": "string", "description": "The account's email (from the token or auth); absent when unknown."},
          "avatar_url": {"type": "string", "description": "Public URL with `?v=<version>`; absent when there is no picture."},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "ProfileUpdate": {
        "type": "object",
        "required": ["display_name"],
        "properties": {"display_name": {"type": "string", "minLength": 1, "maxLength": 60, "description": "Trimmed; 1–60 characters."}}
      },
      "Group": {
        "type": "object",
        "required": ["id", "name", "owner_id", "created_at", "updated_at", "role", "last_read_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "name": {"type": "string"},
          "owner_id": {"type": "string", "format": "uuid"},
          "picture_url": {"type": "string", "description": "Public URL with `?v=<version>`; absent when there is no picture."},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"},
          "role": {"$ref": "#/components/schemas/GroupRole", "description": "The caller's role."},
          "last_read_at": {"type": "string", "format": "date-time", "description": "When the caller last marked the group read."},
          "unread_count": {
            "type": "integer",
            "minimum": 0,
            "description": "Messages by others after `last_read_at`; present in the group list and on create."
          },
          "last_message_at": {
            "type": "string",
            "format": "date-time",
            "description": "The latest message's time; in the group list only, absent while there are none."
          }
        }
      },
      "GroupList": {"type": "array", "items": {"$ref": "#/components/schemas/Group"}},
      "GroupCreate": {
        "type": "object",
        "required": ["name"],
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Trimmed; 1–100 characters."},
          "member_emails": {
            "type": "array",
            "maxItems": 100,
            "items": {"type": "string", "format": "email"},
            "default": [],
            "description": "Unify users to add as members (role `user`)."
          }
        }
      },
      "GroupRename": {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Trimmed; 1–100 characters."}}
      },
      "MarkReadRequest": {
        "type": "object",
        "properties": {"at": {"type": "string", "format": "date-time", "description": "Read up to this time; default now."}}
      },
      "LeaveRequest": {
        "type": "object",
        "properties": {
          "successor_id": {
            "type": "string",
            "format": "uuid",
            "description": "Required when the caller is the owner: another member, who becomes the owner."
          }
        }
      },
      "OwnershipTransfer": {
        "type": "object",
        "required": ["new_owner_id"],
        "properties": {"new_owner_id": {"type": "string", "format": "uuid", "description": "Another member of the group."}}
      },
      "UnreadCount": {
        "type": "object",
        "required": ["group_id", "unread_count"],
        "properties": {"group_id": {"type": "string", "format": "uuid"}, "unread_count": {"type": "integer", "minimum": 0}}
      },
      "UnreadCountList": {"type": "array", "items": {"$ref": "#/components/schemas/UnreadCount"}},
      "Member": {
        "type": "object",
        "required": ["group_id", "user_id", "role", "joined_at", "last_read_at", "display_name"],
        "properties": {
          "group_id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "role": {"$ref": "#/components/schemas/GroupRole"},
          "joined_at": {"type": "string", "format": "date-time"},
          "last_read_at": {"type": "string", "format": "date-time"},
          "display_name": {"type": "string"},
          "avatar_url": {"type": "string", "description": "Public URL with `?v=<version>`; absent when there is no picture."}
        }
      },
      "MemberList": {"type": "array", "items": {"$ref": "#/components/schemas/Member"}},
      "MembersAdd": {
        "type": "object",
        "required": ["emails"],
        "properties": {
          "emails": {
            "type": "array",
            "minItems": 1,
            "maxItems": 100,
            "items": {"type": "string", "format": "email"},
            "description": "Email addresses of Unify users."
          }
        }
      },
      "AddMembersResult": {
        "type": "object",
        "required": ["added"],
        "properties": {
          "added": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/Member"},
            "description": "The members newly added (those already in are not listed)."
          }
        }
      },
      "RoleChange": {
        "type": "object",
        "required": ["role"],
        "properties": {
          "role": {
            "type": "string",
            "enum": ["admin", "user"],
            "description": "`owner` is refused (409 `owner_role_fixed`): transfer ownership instead."
          }
        }
      },
      "MessageSender": {
        "type": "object",
        "required": ["id", "display_name"],
        "properties": {"id": {"type": "string", "format": "uuid"}, "display_name": {"type": "string"}}
      },
      "Message": {
        "type": "object",
        "required": ["id", "group_id", "content", "sent_by", "sent_at", "is_edited", "message_type", "user"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "group_id": {"type": "string", "format": "uuid"},
          "content": {"type": "string", "description": "The text; a voice message's caption (may be empty)."},
          "sent_by": {"type": "string", "format": "uuid"},
          "sent_at": {"type": "string", "format": "date-time"},
          "is_edited": {"type": "boolean"},
          "message_type": {"$ref": "#/components/schemas/MessageType"},
          "voice_duration": {"type": "number", "description": "Seconds; voice messages only."},
          "voice_url": {"type": "string", "description": "A time-limited signed URL of the recording; voice messages only."},
          "user": {"$ref": "#/components/schemas/MessageSender", "description": "The sender's id and current display name."},
          "cursor": {"type": "string", "description": "Opaque position of this message, usable as `before`/`after`; in history pages only."}
        }
      },
      "HistoryPage": {
        "type": "object",
        "required": ["messages", "has_more"],
        "properties": {
          "messages": {"type": "array", "items": {"$ref": "#/components/schemas/Message"}, "description": "Oldest first."},
          "has_more": {
            "type": "boolean",
            "description": "More messages lie beyond this page in the direction it was read (older for the latest page and `before`, newer for `after`)."
          },
          "older_cursor": {
            "type": ["string", "null"],
            "description": "Pass as `before` for the page older than this one; absent or null when there is none."
          },
          "newer_cursor": {
            "type": ["string", "null"],
            "description": "Pass as `after` for messages newer than this page; absent or null when the page is empty (keep the cursor you have)."
          }
        }
      },
      "TextMessage": {
        "type": "object",
        "required": ["content"],
        "properties": {"content": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "Not blank; at most 4000 characters."}}
      },
      "CalendarEvent": {
        "type": "object",
        "required": ["id", "title", "starts_at", "ends_at", "created_by", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "title": {"type": "string"},
          "details": {"type": ["string", "null"], "description": "Absent or null when there are none."},
          "starts_at": {"type": "string", "format": "date-time"},
          "ends_at": {"type": "string", "format": "date-time"},
          "group_id": {"type": ["string", "null"], "format": "uuid", "description": "The group's id; absent or null for a personal event."},
          "created_by": {"type": "string", "format": "uuid"},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "EventList": {"type": "array", "items": {"$ref": "#/components/schemas/CalendarEvent"}},
      "EventCreate": {
        "type": "object",
        "required": ["title", "starts_at", "ends_at"],
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Trimmed; 1–200 characters."},
          "details": {"type": ["string", "null"], "maxLength": 4000},
          "starts_at": {"type": "string", "format": "date-time"},
          "ends_at": {"type": "string", "format": "date-time", "description": "Not before `starts_at`."},
          "group_id": {
            "type": ["string", "null"],
            "format": "uuid",
            "description": "One of the caller's groups; absent or null for a personal event."
          }
        }
      },
      "EventUpdate": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Trimmed; 1–200 characters."},
          "details": {"type": ["string", "null"], "maxLength": 4000, "description": "null clears the details; absent leaves them."},
          "starts_at": {"type": "string", "format": "date-time"},
          "ends_at": {"type": "string", "format": "date-time", "description": "Not before `starts_at`."}
        }
      }
    }
  }
}
"""#
}
