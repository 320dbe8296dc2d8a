import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import ace_tools
df = pd.read_csv('sales.csv')
ace_tools.display_dataframe_to_user('First rows', df.head())
