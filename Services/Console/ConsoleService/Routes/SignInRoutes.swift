import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird

/// Signing in (address and password, then a code), taking an invitation, enrolling the second
/// factor and signing out. Before a session exists, a form is tied to the browser that loaded it
/// by a cookie of its own (`ConsoleCookies.form`): another site cannot sign a browser in.
struct SignInRoutes {
    let web: ConsoleWeb

    func add(to group: RouterGroup<ColonyRequestContext>) {
        group.get("sign-in", use: web.page(signInForm))
        group.post("sign-in", use: web.page(signIn))
        group.get("sign-in/code", use: web.page(codeForm))
        group.post("sign-in/code", use: web.page(code))
        group.get("enroll", use: web.page(enrollForm))
        group.post("enroll", use: web.page(enroll))
        group.get("welcome", use: web.page(welcomeForm))
        group.post("welcome", use: web.page(welcome))
        group.post("sign-out", use: web.page(signOut))
    }

    @Sendable func signInForm(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let token = ConsoleTokens.newToken()
        var response = web.pages.render("sign-in", ["title": "Sign in", "form_token": token, "message": request.uri.queryParameters.get("message") ?? ""])
        response.headers.append(HTTPField(name: .setCookie, value: web.cookies.set(ConsoleCookies.form, token, maxAge: 3600)))
        return response
    }

    @Sendable func signIn(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let form = try await web.preSessionForm(request, context)
        do {
            let (token, stage) = try await web.operators.signIn(email: form["email"] ?? "", password: form["password"] ?? "",
                                                                ipAddress: context.clientAddress, userAgent: request.headers[.userAgent])
            let next = stage == .enrolling ? "/console/enroll" : "/console/sign-in/code"
            return ConsolePages.redirect(next, cookies: [web.cookies.set(ConsoleCookies.session, token), web.cookies.clear(ConsoleCookies.form)])
        } catch let refusal as ConsoleRefusal {
            let token = ConsoleTokens.newToken()
            var response = web.pages.render("sign-in", ["title": "Sign in", "form_token": token, "error": refusal.message, "email": form["email"] ?? ""],
                                            status: HTTPResponse.Status(code: refusal.status))
            response.headers.append(HTTPField(name: .setCookie, value: web.cookies.set(ConsoleCookies.form, token, maxAge: 3600)))
            return response
        }
    }

    @Sendable func codeForm(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        guard let (_, session) = try await web.session(request), session.stage == .password else { return ConsolePages.redirect("/console/sign-in") }
        return web.pages.render("code", ["title": "Your code", "csrf": session.csrfToken])
    }

    @Sendable func code(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        guard let (_, session) = try await web.session(request), session.stage == .password else { return ConsolePages.redirect("/console/sign-in") }
        let form = try await web.form(request, context, session: session)
        do {
            try await web.operators.verifyCode(session: session, code: form["code"] ?? "", ipAddress: context.clientAddress)
            return ConsolePages.redirect("/console/")
        } catch let refusal as ConsoleRefusal {
            return web.pages.render("code", ["title": "Your code", "csrf": session.csrfToken, "error": refusal.message], status: HTTPResponse.Status(code: refusal.status))
        }
    }

    @Sendable func enrollForm(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        guard let (_, session) = try await web.session(request), session.stage == .enrolling else { return ConsolePages.redirect("/console/sign-in") }
        return try await enrollPage(session, error: nil, status: .ok)
    }

    func enrollPage(_ session: OperatorSession, error: String?, status: HTTPResponse.Status) async throws -> Response {
        let (secret, uri) = try await web.operators.enrolment(session: session)
        var values: [String: Any] = ["title": "Set up your second factor", "csrf": session.csrfToken, "secret": secret, "uri": uri,
                                     "qr": (try? QRCode.svgDataURI(uri)) ?? ""]
        if let error { values["error"] = error }
        return web.pages.render("enroll", values, status: status)
    }

    @Sendable func enroll(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        guard let (_, session) = try await web.session(request), session.stage == .enrolling else { return ConsolePages.redirect("/console/sign-in") }
        let form = try await web.form(request, context, session: session)
        do {
            try await web.operators.confirmEnrolment(session: session, code: form["code"] ?? "", ipAddress: context.clientAddress)
            return ConsolePages.redirect("/console/")
        } catch let refusal as ConsoleRefusal {
            return try await enrollPage(session, error: refusal.message, status: HTTPResponse.Status(code: refusal.status))
        }
    }

    @Sendable func welcomeForm(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let invitation = request.uri.queryParameters.get("token") ?? ""
        guard invitation.utf8.count <= 128, let record = try await web.operators.invitation(invitation) else {
            throw ConsoleRefusal(.notFound, "This invitation is used or has expired: ask an owner for a new one.")
        }
        let token = ConsoleTokens.newToken()
        var response = web.pages.render("welcome", ["title": "Welcome", "form_token": token, "invitation": invitation, "email": record.email,
                                                    "role": record.role.title, "minimum": PasswordRules.minimumLength])
        response.headers.append(HTTPField(name: .setCookie, value: web.cookies.set(ConsoleCookies.form, token, maxAge: 3600)))
        return response
    }

    @Sendable func welcome(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        let form = try await web.preSessionForm(request, context)
        let invitation = form["invitation"] ?? ""
        guard (form["password"] ?? "") == (form["repeat"] ?? "") else {
            throw ConsoleRefusal(.badInput, "The two passwords differ.")
        }
        let (token, _) = try await web.operators.acceptInvitation(token: invitation, password: form["password"] ?? "",
                                                                 ipAddress: context.clientAddress, userAgent: request.headers[.userAgent])
        return ConsolePages.redirect("/console/enroll", cookies: [web.cookies.set(ConsoleCookies.session, token), web.cookies.clear(ConsoleCookies.form)])
    }

    @Sendable func signOut(_ request: Request, context: ColonyRequestContext) async throws -> Response {
        if let (record, session) = try await web.session(request) {
            _ = try await web.form(request, context, session: session)
            try await web.operators.signOut(session)
            try await web.operators.record(nil, email: record.email, action: "sign_out", outcome: .ok, ipAddress: context.clientAddress)
        }
        return ConsolePages.redirect("/console/sign-in", cookies: [web.cookies.clear(ConsoleCookies.session)])
    }
}
