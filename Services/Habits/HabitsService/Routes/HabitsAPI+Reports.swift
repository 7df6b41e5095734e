import ColonyModels
import ColonyPlatform
import Foundation
import OpenAPIRuntime

/// Reports of hives and people (`HabitsReportables`); `ReportDesk` checks and stores them.
extension HabitsAPI {
    func createReport(_ input: Operations.CreateReport.Input) async throws -> Operations.CreateReport.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let filed = try await database.callerWrite { caller, connection in
            try await reports.file(objectType: body.objectType.rawValue, objectId: body.objectId, category: body.category.rawValue, words: body.words,
                                  by: caller.id, on: connection)
        }
        return .created(.init(body: .json(.init(filed))))
    }
}

extension Components.Schemas.Report {
    init(_ report: FiledReport) {
        self.init(id: report.id.lowercased, objectType: report.objectType, objectId: report.objectId.lowercased,
                  category: CategoryPayload(rawValue: report.category.rawValue) ?? .other, words: report.words,
                  status: StatusPayload(rawValue: report.status) ?? .open, createdAt: report.createdAt)
    }
}
