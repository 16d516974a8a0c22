"""Top levels of Foursquare's venue category tree (API v2, ``/v2/venues/categories``).

The v2 tree has ten top-level categories: 'Arts & Entertainment', 'College & University',
'Event', 'Food', 'Nightlife Spot', 'Outdoors & Recreation', 'Professional & Other Places',
'Residence', 'Shop & Service' and 'Travel & Transport'. Check-in data such as TSMC 2014
(Yang et al.) records only the venue's own category name ('Subway', 'Deli / Bodega', ...);
``TOP_LEVEL`` maps such names to their top level, so that locations get the hierarchy
root > top level > category > venue used by the co-location synthesizer of Narita et al.
(DPM 2021) and by Privelet (Xiao, Wang and Gehrke, TKDE 2011).

The names are those of the 2012-2014 tree the TSMC check-ins were recorded with (e.g.
'Athletic & Sport', 'Ferry', 'Spa / Massage'), with 'Gym / Fitness Center' under 'Outdoors &
Recreation' and 'City' / 'Neighborhood' (States & Municipalities) under 'Outdoors & Recreation'
as in that tree; a few later names are included too. Every top-level name maps to itself.

The tree is part of the data model (a Space's :meth:`~locsynth.data.space.Space.hierarchy` and
:meth:`~locsynth.data.space.Space.top_category` read it), so it sits beside space.py, on the data
model's storey, rather than among the readers (io/).
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd

_TREE: dict[str, tuple[str, ...]] = {
    "Arts & Entertainment": (
        "Aquarium", "Arcade", "Art Gallery", "Bowling Alley", "Casino", "Circus", "Comedy Club",
        "Concert Hall", "General Entertainment", "Go Kart Track", "Historic Site", "Laser Tag",
        "Mini Golf", "Movie Theater", "Indie Movie Theater", "Multiplex", "Museum", "Art Museum",
        "History Museum", "Planetarium", "Science Museum", "Music Venue", "Jazz Club", "Piano Bar",
        "Rock Club", "Performing Arts Venue", "Dance Studio", "Indie Theater", "Opera House", "Theater",
        "Pool Hall", "Public Art", "Outdoor Sculpture", "Street Art", "Racetrack", "Roller Rink",
        "Stadium", "Baseball Stadium", "Basketball Stadium", "Football Stadium", "Hockey Arena",
        "Soccer Stadium", "Tennis Stadium", "Track Stadium", "Theme Park", "Theme Park Ride / Attraction",
        "Water Park", "Zoo",
    ),
    "College & University": (
        "College Academic Building", "College Arts Building", "College Communications Building",
        "College Engineering Building", "College History Building", "College Math Building",
        "College Science Building", "College Technology Building", "College Administrative Building",
        "College Auditorium", "College Bookstore", "College Cafeteria", "College Classroom", "College Gym",
        "College Lab", "College Library", "College Quad", "College Rec Center", "College Residence Hall",
        "College Stadium", "College Baseball Diamond", "College Basketball Court", "College Football Field",
        "College Soccer Field", "College Tennis Court", "College Track", "College Theater",
        "Community College", "Fraternity House", "Sorority House", "General College & University",
        "Law School", "Medical School", "Student Center", "Trade School", "University",
    ),
    "Event": (
        "Conference", "Convention", "Festival", "Music Festival", "Other Event", "Parade", "Stoop Sale",
        "Street Fair",
    ),
    "Food": (
        "Afghan Restaurant", "African Restaurant", "Ethiopian Restaurant", "American Restaurant",
        "New American Restaurant", "Arepa Restaurant", "Argentinian Restaurant", "Asian Restaurant",
        "Australian Restaurant", "Austrian Restaurant", "BBQ Joint", "Bagel Shop", "Bakery",
        "Belgian Restaurant", "Bistro", "Brazilian Restaurant", "Breakfast Spot", "Bubble Tea Shop",
        "Buffet", "Burger Joint", "Burrito Place", "Cafeteria", "Café", "Cajun / Creole Restaurant",
        "Cambodian Restaurant", "Caribbean Restaurant", "Chinese Restaurant", "Cantonese Restaurant",
        "Hong Kong Restaurant", "Peking Duck Restaurant", "Shanghai Restaurant", "Szechuan Restaurant",
        "Taiwanese Restaurant", "Coffee Shop", "Comfort Food Restaurant", "Creperie", "Cuban Restaurant",
        "Cupcake Shop", "Deli / Bodega", "Dessert Shop", "Dim Sum Restaurant", "Diner", "Distillery",
        "Donut Shop", "Dumpling Restaurant", "Eastern European Restaurant", "English Restaurant",
        "Falafel Restaurant", "Fast Food Restaurant", "Filipino Restaurant", "Fish & Chips Shop",
        "Fondue Restaurant", "Food Court", "Food Truck", "French Restaurant", "Fried Chicken Joint",
        "Frozen Yogurt", "Gastropub", "German Restaurant", "Gluten-free Restaurant", "Greek Restaurant",
        "Halal Restaurant", "Hawaiian Restaurant", "Himalayan Restaurant", "Hot Dog Joint",
        "Hotpot Restaurant", "Ice Cream Shop", "Indian Restaurant", "Indonesian Restaurant", "Irish Pub",
        "Italian Restaurant", "Japanese Restaurant", "Donburi Restaurant", "Japanese Curry Restaurant",
        "Okonomiyaki Restaurant", "Ramen Restaurant", "Soba Restaurant", "Sushi Restaurant",
        "Takoyaki Place", "Tempura Restaurant", "Tonkatsu Restaurant", "Udon Restaurant",
        "Unagi Restaurant", "Yakitori Restaurant", "Juice Bar", "Korean Restaurant", "Kosher Restaurant",
        "Latin American Restaurant", "Empanada Restaurant", "Mac & Cheese Joint", "Malaysian Restaurant",
        "Mediterranean Restaurant", "Mexican Restaurant", "Middle Eastern Restaurant",
        "Modern European Restaurant", "Molecular Gastronomy Restaurant", "Mongolian Restaurant",
        "Moroccan Restaurant", "Noodle House", "Pakistani Restaurant", "Persian Restaurant",
        "Peruvian Restaurant", "Pie Shop", "Pizza Place", "Polish Restaurant", "Portuguese Restaurant",
        "Ramen /  Noodle House", "Restaurant", "Russian Restaurant", "Salad Place", "Sandwich Place",
        "Scandinavian Restaurant", "Seafood Restaurant", "Snack Place", "Soup Place",
        "South American Restaurant", "Southern / Soul Food Restaurant", "Spanish Restaurant",
        "Paella Restaurant", "Steakhouse", "Swiss Restaurant", "Taco Place", "Tapas Restaurant",
        "Tea Room", "Thai Restaurant", "Tibetan Restaurant", "Turkish Restaurant",
        "Vegetarian / Vegan Restaurant", "Vietnamese Restaurant", "Winery", "Wings Joint",
    ),
    "Nightlife Spot": (
        "Bar", "Beach Bar", "Beer Garden", "Brewery", "Champagne Bar", "Cocktail Bar", "Dive Bar", "Gay Bar",
        "Hookah Bar", "Hotel Bar", "Karaoke Bar", "Lounge", "Nightclub", "Other Nightlife", "Pub", "Sake Bar",
        "Speakeasy", "Sports Bar", "Strip Club", "Whisky Bar", "Wine Bar",
    ),
    "Outdoors & Recreation": (
        "Athletic & Sport", "Athletics & Sports", "Baseball Field", "Basketball Court", "Golf Course",
        "Gym / Fitness Center", "Gym", "Yoga Studio", "Martial Arts Dojo", "Hockey Field", "Skate Park",
        "Skating Rink", "Soccer Field", "Tennis Court", "Volleyball Court", "Beach", "Botanical Garden",
        "Bridge", "Campground", "Castle", "Cemetery", "Dive Spot", "Dog Run", "Farm", "Field",
        "Fishing Spot", "Forest", "Garden", "Gun Range", "Harbor / Marina", "Hot Spring", "Island", "Lake",
        "Lighthouse", "Mountain", "National Park", "Nature Preserve", "Other Great Outdoors", "Palace",
        "Park", "Pedestrian Plaza", "Playground", "Plaza", "Pool", "Rafting", "Recreation Center", "River",
        "Rock Climbing Spot", "Scenic Lookout", "Sculpture Garden", "Ski Area", "Ski Lodge", "Ski Trail",
        "Stables", "States & Municipalities", "City", "County", "Country", "Neighborhood", "State", "Town",
        "Village", "Summer Camp", "Trail", "Vineyard", "Volcano",
    ),
    "Professional & Other Places": (
        "Animal Shelter", "Auditorium", "Building", "Club House", "Community Center", "Convention Center",
        "Meeting Room", "Cultural Center", "Event Space", "Factory", "Fair", "Funeral Home",
        "Government Building", "Capitol Building", "City Hall", "Courthouse", "Embassy / Consulate",
        "Fire Station", "Monument / Landmark", "Police Station", "Town Hall", "Library", "Medical Center",
        "Dentist's Office", "Doctor's Office", "Emergency Room", "Hospital", "Laboratory", "Veterinarian",
        "Military Base", "Non-Profit", "Office", "Conference Room", "Coworking Space", "Tech Startup",
        "Parking", "Post Office", "Prison", "Radio Station", "School", "Driving School",
        "Elementary School", "High School", "Language School", "Middle School", "Music School",
        "Nursery School", "Preschool", "Private School", "Spiritual Center", "Buddhist Temple", "Church",
        "Hindu Temple", "Monastery", "Mosque", "Shrine", "Synagogue", "Temple", "TV Station", "Voting Booth",
        "Warehouse",
    ),
    "Residence": (
        "Assisted Living", "Home (private)", "Housing Development", "Residential Building (Apartment / Condo)",
        "Trailer Park",
    ),
    "Shop & Service": (
        "ATM", "Antique Shop", "Arts & Crafts Store", "Automotive Shop", "Baby Store", "Bank", "Bike Shop",
        "Board Shop", "Bookstore", "Bridal Shop", "Camera Store", "Candy Store", "Car Dealership", "Car Wash",
        "Chocolate Shop", "Clothing Store", "Accessories Store", "Boutique", "Kids Store", "Lingerie Store",
        "Men's Store", "Shoe Store", "Women's Store", "Comic Shop", "Convenience Store", "Cosmetics Shop",
        "Costume Shop", "Credit Union", "Daycare", "Department Store", "Design Studio", "Discount Store",
        "Drugstore / Pharmacy", "Dry Cleaner", "Electronics Store", "Fabric Shop",
        "Financial or Legal Service", "Flea Market", "Flower Shop", "Food & Drink Shop", "Beer Store",
        "Butcher", "Cheese Shop", "Farmers Market", "Fish Market", "Gourmet Shop", "Grocery Store",
        "Health Food Store", "Liquor Store", "Organic Grocery", "Supermarket", "Wine Shop",
        "Furniture / Home Store", "Gaming Cafe", "Garden Center", "Gas Station / Garage", "Gift Shop",
        "Hardware Store", "Hobby Shop", "Internet Cafe", "IT Services", "Jewelry Store", "Laundromat",
        "Laundry Service", "Luggage Store", "Mall", "Market", "Miscellaneous Shop", "Mobile Phone Shop",
        "Motorcycle Shop", "Music Store", "Nail Salon", "Newsstand", "Optical Shop", "Outlet Store",
        "Paper / Office Supplies Store", "Pawn Shop", "Perfume Shop", "Pet Service", "Pet Store",
        "Photography Lab", "Record Shop", "Recording Studio", "Recycling Facility", "Salon / Barbershop",
        "Shipping Store", "Smoke Shop", "Souvenir Shop", "Spa / Massage", "Spa", "Sporting Goods Shop",
        "Stationery Store", "Storage Facility", "Tailor Shop", "Tanning Salon", "Tattoo Parlor",
        "Thrift / Vintage Store", "Toy / Game Store", "Travel Agency", "Used Bookstore", "Video Game Store",
        "Video Store",
    ),
    "Travel & Transport": (
        "Airport", "Airport Food Court", "Airport Gate", "Airport Lounge", "Airport Terminal", "Airport Tram",
        "Plane", "Bike Rental / Bike Share", "Boat or Ferry", "Ferry", "Border Crossing", "Bus Station",
        "Bus Line", "Bus Stop", "Cable Car", "General Travel", "Hotel", "Bed & Breakfast", "Boarding House",
        "Hostel", "Motel", "Resort", "Intersection", "Light Rail", "Metro Station", "Moving Target", "Pier",
        "RV Park", "Rental Car Location", "Rest Area", "Road", "Street", "Subway", "Taxi", "Taxi Stand",
        "Toll Booth", "Toll Plaza", "Tourist Information Center", "Train Station", "Platform", "Train",
        "Tram", "Travel Lounge", "Tunnel",
    ),
}

#: the ten top-level categories of the v2 tree
TOP_LEVELS: tuple[str, ...] = tuple(_TREE)


def _normalize(name: str) -> str:
    """NFC, single spaces (TSMC spells 'Ramen /  Noodle House' with two)."""
    return " ".join(unicodedata.normalize("NFC", name).split())


#: category name (as in the data, and whitespace-normalized) -> top-level category
TOP_LEVEL: dict[str, str] = {
    key: top for top, names in _TREE.items() for name in (top, *names) for key in (name, _normalize(name))
}


def top_level(names) -> np.ndarray | None:
    """The top-level category of each name (object array), or None when any name is unknown."""
    codes, uniques = pd.factorize(pd.Series(np.asarray(names, dtype=object).ravel()), use_na_sentinel=True)
    if (codes < 0).any():
        return None
    tops = [TOP_LEVEL.get(_normalize(u)) if isinstance(u, str) else None for u in uniques]
    if any(t is None for t in tops):
        return None
    return np.asarray(tops, dtype=object)[codes].reshape(np.shape(names))
