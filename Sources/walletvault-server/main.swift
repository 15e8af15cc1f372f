print("walletvault-server")
