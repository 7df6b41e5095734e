@_exported import ColonyModels
@_exported import ColonyPlatform
@_exported import HummingbirdTesting
