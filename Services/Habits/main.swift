import HabitsService
import ColonyPlatform

// colony-habits: serves; everything it reads is in HabitsLaunch.
await ServiceCommandLine.main(ServeCommand<HabitsLaunch>.self)
